#!/usr/bin/env node
// The test command of the StrykerJS recipe (docs/MUTATION.md): one dshfuzz campaign against
// checker.mjs as it stands in Stryker's sandbox (the working folder), whose exit status
// Stryker reads as a test run's: 0 survived, anything else killed.
//
// Stryker first runs the command with no mutant active (its "dry run"): that run is the
// baseline campaign of the unmutated checker, written beside the sandbox's checker. Every
// mutant's campaign (Stryker sets __STRYKER_ACTIVE_MUTANT__, which dshfuzz's workers and the
// serve process inherit, so the instrumented checker.mjs switches the mutant on) then runs
// with --baseline of it: only a cause the unmutated checker did not show kills the mutant.
// Same seed and an example budget, so that both campaigns draw the same logs whatever the
// machine's load.
//
// Environment:
//   DSHFUZZ_PYTHON  a Python with dshfuzz installed, run as `python -m dshfuzz`
//                   (default: the `dshfuzz` command on PATH)
//   DSHFUZZ_BUDGET  each campaign's budget (default 300examples; an example budget keeps the
//                   verdicts independent of the machine's load, a time budget does not)
//   DSHFUZZ_SEED    the campaigns' seed (default 1)
//   DSHFUZZ_ARGS    more `dshfuzz fuzz` options, split on spaces (e.g. "--no-official"); they
//                   come last, so they override the ones above
// One worker process per campaign: with several, which worker draws which log depends on
// timing, and the baseline and a mutant would no longer judge the same logs.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const MUTANT = process.env.__STRYKER_ACTIVE_MUTANT__;
// in the sandbox: Stryker shares one sandbox between its test runners, and the dry run ends
// before any mutant's run starts, so every mutant reads the finished baseline
const BASELINE = resolve(".dshfuzz-baseline");

const dshfuzz = process.env.DSHFUZZ_PYTHON ? [process.env.DSHFUZZ_PYTHON, "-m", "dshfuzz"] : ["dshfuzz"];
// the Node that runs Stryker (>= 22) serves the checker too: the one on PATH may be another
const checker = `serve:${JSON.stringify(process.execPath)} checker.mjs`;
const args = [
  "fuzz", "--checker", checker,
  "--budget", process.env.DSHFUZZ_BUDGET || "300examples",
  "--seed", process.env.DSHFUZZ_SEED || "1",
  "--workers", "1",
  ...(process.env.DSHFUZZ_ARGS || "").split(" ").filter(Boolean),
];

function fuzz(extra) {
  const run = spawnSync(dshfuzz[0], [...dshfuzz.slice(1), ...args, ...extra], { stdio: "inherit" });
  if (run.error) {
    console.error(`dshfuzz-test: cannot run ${dshfuzz.join(" ")}: ${run.error.message}`);
    return 2;
  }
  return run.status ?? 2; // killed by a signal (Stryker's timeout): not a verdict
}

if (MUTANT === undefined) {
  // the baseline: findings of the unmutated checker (exit 1) are known causes, not a failure;
  // only a campaign that could not run (2) fails the dry run, and so stops Stryker
  rmSync(BASELINE, { recursive: true, force: true });
  const status = fuzz(["--out", BASELINE]);
  process.exit(status === 0 || status === 1 ? 0 : status);
}

if (!existsSync(join(BASELINE, "summary.json"))) {
  console.error(`dshfuzz-test: no baseline at ${BASELINE} (Stryker's dry run writes it)`);
  process.exit(2);
}
// each mutant's report in a folder of its own: Stryker's runners may run side by side
const out = mkdtempSync(join(tmpdir(), `dshfuzz-mutant-${MUTANT}-`));
// no --stop-after: it counts known findings too, so a checker with known bugs would stop early
const status = fuzz(["--baseline", BASELINE, "--out", out]);
rmSync(out, { recursive: true, force: true });
process.exit(status);

// A Node checker with a slow start and a small cost per log, behind all three protocols
// of docs/CHECKER_PROTOCOL.md: the checker of the issue-17 benchmark (benchmarks/protocols.py).
//
//   node protocol_checker.mjs [OPTIONS] check LOG          per log: one report on stdout
//   node protocol_checker.mjs [OPTIONS] check-many LOG...  batch: one JSON line per file, "file" set
//   node protocol_checker.mjs [OPTIONS] serve              dshfuzz-checker/1 on stdin/stdout
//
// OPTIONS: --startup-ms N (default 300): simulated start-up (module loading, imports), a
//          synchronous sleep before anything else; --spin-startup burns the CPU instead;
//          --per-log-ms N (default 2): each log's work is padded with a busy loop to N ms.
//
// Each log is really read: the file (zstd frames decoded with Node's zlib), every line
// JSON.parse'd. It implements one rule, and declares only that one:
//   H1: the first line is a JSON object whose type is "session".
// A .jsonl.zstd file that zlib cannot decode gets no finding (its header is unknown).

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { zstdDecompressSync } from "node:zlib";

const RULES = ["H1"];

function options(argv) {
  const opts = { startupMs: 300, perLogMs: 2, spinStartup: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (opts.rest.length === 0 && arg === "--startup-ms") opts.startupMs = Number(argv[++i]);
    else if (opts.rest.length === 0 && arg === "--per-log-ms") opts.perLogMs = Number(argv[++i]);
    else if (opts.rest.length === 0 && arg === "--spin-startup") opts.spinStartup = true;
    else opts.rest.push(arg);
  }
  return opts;
}

const opts = options(process.argv.slice(2));

function spinUntil(deadline) {
  let x = 0;
  while (performance.now() < deadline) x += Math.sqrt(x + 1);
  return x;
}

// The simulated start-up: what a real checker spends importing its modules.
if (opts.startupMs > 0) {
  if (opts.spinStartup) spinUntil(performance.now() + opts.startupMs);
  else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, opts.startupMs);
}

function parses(line) {
  try {
    return { ok: true, value: JSON.parse(line) };
  } catch {
    return { ok: false };
  }
}

function check(path) {
  const began = performance.now();
  let text = null;
  const raw = readFileSync(path);
  if (path.endsWith(".zstd")) {
    try {
      text = zstdDecompressSync(raw).toString("utf8");
    } catch {
      text = null; // a corrupt or over-limit frame: no header to judge
    }
  } else {
    text = raw.toString("utf8");
  }
  const findings = [];
  if (text !== null) {
    const lines = text.split("\n");
    const parsed = lines.map((line) => (line.trim() ? parses(line) : { ok: false }));
    const h = parsed[0].value;
    if (!parsed[0].ok || h === null || typeof h !== "object" || Array.isArray(h) || h.type !== "session") {
      findings.push({ rule: "H1", severity: "error", seq: null });
    }
  }
  spinUntil(began + opts.perLogMs);
  return { findings };
}

const hasError = (report) => (report.findings ?? []).some((f) => (f.severity ?? "error") === "error");
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

const [mode, ...paths] = opts.rest;
if (mode === "check" && paths.length === 1) {
  const report = check(paths[0]);
  send(report);
  process.exitCode = hasError(report) ? 1 : 0;
} else if (mode === "check-many") {
  let errors = false;
  const lines = paths.map((path) => {
    const report = { file: path, ...check(path) };
    errors ||= hasError(report);
    return JSON.stringify(report);
  });
  process.stdout.write(lines.map((line) => line + "\n").join(""));
  process.exitCode = errors ? 1 : 0;
} else if (mode === "serve") {
  send({ protocol: "dshfuzz-checker/1", rules: RULES });
  createInterface({ input: process.stdin, crlfDelay: Infinity }).on("line", (line) => {
    if (!line.trim()) return;
    let request;
    try {
      request = JSON.parse(line);
    } catch (err) {
      send({ id: null, error: `malformed request: ${err.message}` });
      return;
    }
    try {
      send({ id: request.id, ...check(request.path) });
    } catch (err) {
      send({ id: request.id, error: `cannot check ${request.path}: ${err.message}` });
    }
  });
} else {
  process.stderr.write("usage: protocol_checker.mjs [--startup-ms N] [--per-log-ms N] [--spin-startup] check LOG | check-many LOG... | serve\n");
  process.exitCode = 2;
}

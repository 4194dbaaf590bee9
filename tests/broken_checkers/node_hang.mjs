// Hangs on some input: a serve-protocol (dshfuzz-checker/1) checker in Node that never
// answers a log holding a compaction/prune event, and is otherwise right.
//
// It declares a small vocabulary, H1 and R1, and implements both as the built-in
// checker does: H1 when the first line is not a JSON object with type "session" (or
// the file is empty); R1 for every later line ended by a newline that does not
// JSON.parse (an empty line included; a last line without its newline is a torn tail,
// not R1). Both are reported without a seq, as the built-in checker reports them. It
// reads .jsonl only: a .zstd log, or one beyond the built-in reader's resource limits
// (a line over 32 MiB, JSON nested over 512 deep, over 10,000 unreadable lines), it
// answers as not assessable.
//
// Run with Node 24: serve:'NODE tests/broken_checkers/node_hang.mjs'.

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const RULES = ["H1", "R1"];
const LINE_LIMIT = 32 * 1024 * 1024;
const DEPTH_LIMIT = 512;
const UNREADABLE_LIMIT = 10_000;

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function hangForever() {
  // blocks the only thread without burning CPU: no reply, ever
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

function parse(line) {
  try {
    return { ok: true, value: JSON.parse(line) };
  } catch {
    return { ok: false };
  }
}

function depth(line) {
  let deepest = 0, level = 0, inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) deepest = Math.max(deepest, ++level);
    else if (c === 93 || c === 125) level--;
  }
  return deepest;
}

function check(path) {
  if (path.endsWith(".zstd")) return { assessable: false, findings: [] };
  const lines = readFileSync(path, "utf8").split("\n");
  const findings = [];
  let unreadable = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const terminated = i < lines.length - 1;
    if (line.length > LINE_LIMIT || depth(line) > DEPTH_LIMIT) return { assessable: false, findings: [] };
    if (i === 0) {
      if (!terminated && line === "") return { findings: [{ rule: "H1", severity: "error", seq: null }] };
      const header = parse(line);
      const v = header.value;
      if (!header.ok || v === null || typeof v !== "object" || Array.isArray(v) || v.type !== "session") {
        findings.push({ rule: "H1", severity: "error", seq: null });
      }
      continue;
    }
    if (!terminated) break; // a torn tail
    const event = parse(line);
    if (!event.ok) {
      if (++unreadable > UNREADABLE_LIMIT) return { assessable: false, findings: [] };
      findings.push({ rule: "R1", severity: "error", seq: null });
    } else if (event.value !== null && typeof event.value === "object" && event.value.type === "compaction/prune") {
      hangForever(); // the planted defect
    }
  }
  return { findings };
}

send({ protocol: "dshfuzz-checker/1", rules: RULES });
const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
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

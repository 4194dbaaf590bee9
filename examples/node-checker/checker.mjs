// A minimal serve-protocol checker (dshfuzz-checker/1) in Node, no dependencies.
//
// It implements two rules of the contract catalog, and declares exactly those:
//   H1: the first line ends with a newline and is a JSON object whose type is "session";
//   R1: every later line that ends with a newline is valid JSON (a last line without
//       its newline is a torn tail, not a corrupt line).
// It reads plain .jsonl logs; a .jsonl.zstd log it answers as not assessable.
// Fuzz it:  dshfuzz fuzz --checker "serve:'node examples/node-checker/checker.mjs'"

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const RULES = ["H1", "R1"];

function parses(line) {
  try {
    return { ok: true, value: JSON.parse(line) };
  } catch {
    return { ok: false };
  }
}

function check(path) {
  if (path.endsWith(".zstd")) return { assessable: false, findings: [] };
  const lines = readFileSync(path, "utf8").split("\n");
  const findings = [];
  const header = parses(lines[0]);
  const h = header.value;
  if (lines.length < 2 || !header.ok || h === null || typeof h !== "object" || Array.isArray(h) || h.type !== "session") {
    findings.push({ rule: "H1", severity: "error", seq: null });
  }
  for (const line of lines.slice(1, -1)) { // the last piece is what follows the last newline
    if (!parses(line).ok) findings.push({ rule: "R1", severity: "error", seq: null });
  }
  return { findings };
}

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

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

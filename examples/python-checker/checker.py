"""A minimal serve-protocol checker (dshfuzz-checker/1) in Python, standard library only.

It implements two rules of the contract catalog, and declares exactly those:

- H1: the first line is a complete line (it ends with a newline) holding a JSON object whose
  type is "session";
- R1: every later line that ends with a newline is valid JSON (a last line without
  its newline is a torn tail, not a corrupt line).

It reads plain .jsonl logs; a .jsonl.zstd log it answers as not assessable.
Fuzz it:  dshfuzz fuzz --checker "serve:'python examples/python-checker/checker.py'"
"""

import json
import sys

RULES = ["H1", "R1"]


def _reject(constant):
    raise ValueError(f"{constant} is not JSON")  # Python's json reads NaN and Infinity; JSON does not


def parses(line):
    try:
        return True, json.loads(line, parse_constant=_reject)
    except ValueError:
        return False, None


def check(path):
    if path.endswith(".zstd"):
        return {"assessable": False, "findings": []}
    with open(path, "rb") as log:
        lines = log.read().decode("utf-8", "replace").split("\n")
    findings = []
    ok, header = parses(lines[0])
    if len(lines) < 2 or not ok or not isinstance(header, dict) or header.get("type") != "session":
        findings.append({"rule": "H1", "severity": "error", "seq": None})
    for line in lines[1:-1]:  # lines[-1] is what follows the last newline
        if not parses(line)[0]:
            findings.append({"rule": "R1", "severity": "error", "seq": None})
    return {"findings": findings}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    send({"protocol": "dshfuzz-checker/1", "rules": RULES})
    for line in sys.stdin:  # one request a line, until the harness closes stdin
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            rid, path = request["id"], request["path"]
        except (ValueError, KeyError, TypeError) as exc:
            send({"id": None, "error": f"malformed request: {exc}"})
            continue
        try:
            send({"id": rid, **check(path)})
        except OSError as exc:
            send({"id": rid, "error": f"cannot read {path}: {exc.strerror}"})


if __name__ == "__main__":
    main()

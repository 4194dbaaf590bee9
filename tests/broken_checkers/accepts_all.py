"""Accepts every log: it reports no finding at all, so every official refusal is its miss."""

from __future__ import annotations

import json
import sys


def check(path: str) -> dict:
    return {"findings": []}


if __name__ == "__main__":
    print(json.dumps(check(sys.argv[1])))

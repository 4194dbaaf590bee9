"""Every corpus entry behaves as its meta records: a known bug STILL FAILING, a recorded fix
(``fixedBy``) FIXED, a witness HOLDS (``dshfuzz corpus replay`` exits 0 on it).

The corpus is the record of what campaigns found; replay needs no Node (it
re-classifies against the truth recorded in each entry). Entries whose checker is
one of the deliberately broken checkers in ``tests/broken_checkers`` must stay
STILL FAILING: they prove the campaign's findings are reproducible artefacts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dshfuzz.harness import Corpus, replay_entry

REPO = Path(__file__).resolve().parents[2]
ENTRIES = list(Corpus(REPO / "corpus").entries())


def test_the_corpus_is_not_empty():
    assert ENTRIES, "corpus/ holds no witness: campaigns' findings are not being kept"


@pytest.mark.parametrize("path, entry", ENTRIES, ids=[f"{e.signature}@{p.name}" for p, e in ENTRIES])
def test_each_witness_reproduces(path, entry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # py:tests.broken_checkers... resolve from the corpus's project root
    result = replay_entry(path, entry)
    log = path.read_bytes()[:4000].decode("utf-8", "replace")
    assert result.as_recorded, f"{result.status}, recorded {result.expected}: {result.detail}\n{log}"

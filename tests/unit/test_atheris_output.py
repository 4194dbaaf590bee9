"""Reading libFuzzer's output: the figures come from its own lines, and a failure keeps its stack."""

from __future__ import annotations

from pathlib import Path

from dshfuzz.harness._atheris import OutputParser

RUN = """\
INFO: Seed: 1
#512\tpulse  cov: 988 ft: 2316 corp: 70/38Kb lim: 1024 exec/s: 128 rss: 98Mb
#2048\tNEW    cov: 1207 ft: 2905 corp: 132/78Kb lim: 1024 exec/s: 66 rss: 139Mb L: 12/512 MS: 1 Custom-
#3000\tDONE   cov: 1235 ft: 3051 corp: 155/94Kb lim: 1024 exec/s: 66 rss: 154Mb
Done 3000 runs in 45 second(s)
stat::number_of_executed_units: 3000
stat::new_units_added:          186
stat::peak_rss_mb:              161
"""

SLOW_MUTATION_THEN_DONE = """\
#29415\tREDUCE cov: 384 ft: 1343 corp: 167/42Kb lim: 512 exec/s: 100 rss: 120Mb L: 201/512 MS: 1 Custom-

 === Timeout: 4s elapsed, timeout=2s ===
Current thread 0x00007fd4099d9b80 (most recent call first):
  File "/work/main/src/dshfuzz/model/_zstd.py", line 282 in _rle_pieces
#50000\tDONE   cov: 396 ft: 1391 corp: 180/44Kb lim: 512 exec/s: 51 rss: 149Mb
stat::number_of_executed_units: 50000
"""

CRASH = """\
#7\tINITED cov: 12 ft: 13 corp: 4/300b exec/s: 0 rss: 63Mb

 === Uncaught Python exception: ===
ValueError: planted bug
Traceback (most recent call last):
  File "/work/main/tests/quality/planted_bug.py", line 18, in target
ValueError: planted bug

==14372== ERROR: libFuzzer: fuzz target exited
SUMMARY: libFuzzer: fuzz target exited
MS: 0 ; base unit: 0000000000000000000000000000000000000000
artifact_prefix='/tmp/x/artefacts/'; Test unit written to /tmp/x/artefacts/crash-baab79cc
stat::number_of_executed_units: 8
"""


def _parse(text: str) -> OutputParser:
    parser = OutputParser()
    for line in text.splitlines(keepends=True):
        parser.feed(line)
    return parser


def test_a_clean_run_reports_libfuzzers_own_figures():
    parser = _parse(RUN)
    stats = parser.stats(seconds=50.0, cpu_seconds=40.0)
    assert (stats.executions, stats.coverage, stats.features) == (3000, 1235, 3051)
    assert (stats.corpus_units, stats.corpus_bytes, stats.new_units, stats.peak_rss_mb) == (155, 94 * 1024, 186, 161)
    assert stats.exec_per_sec == 60.0 and stats.exec_per_cpu_sec == 75.0
    assert parser.error is None and not parser.artefacts and not parser.traceback


def test_a_slow_mutation_stack_dump_does_not_swallow_the_rest_of_the_run():
    parser = _parse(SLOW_MUTATION_THEN_DONE)
    assert parser.stats(1.0, 1.0).executions == 50_000
    assert parser.status.coverage == 396
    assert parser.error is None and not parser.artefacts


def test_a_crash_keeps_its_traceback_reason_and_artefact():
    parser = _parse(CRASH)
    assert parser.error == "fuzz target exited"
    assert parser.artefacts == [Path("/tmp/x/artefacts/crash-baab79cc")]
    assert parser.traceback[0] == "=== Uncaught Python exception: ==="
    assert parser.traceback[-1] == "ValueError: planted bug"
    assert parser.stats(1.0, 1.0).executions == 8

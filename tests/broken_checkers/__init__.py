"""Deliberately broken checkers: each wraps the built-in checker and plants one defect.

They exist to prove the campaign finds and minimises what it claims to: a rule
switched off (miss), a rule firing on clean logs (false alarm), a rule reporting
the wrong seq (wrong place), and a crash on some inputs. Each is usable as
``py:tests.broken_checkers.<name>:check`` and as ``cmd:'python -m
tests.broken_checkers.<name> {log}'``.

Behind the other protocols: ``serve.py MODULE`` serves any of them over
dshfuzz-checker/1 and ``batch.py [--array] MODULE {logs}`` runs any of them as a
batch command; ``node_hang.mjs`` is a Node serve checker of H1 and R1 that hangs
on a log holding a compaction/prune event. For time limits, ``slow.py`` sleeps on
every log. For honest classification: ``no_seq`` reports no seqs, ``not_assessable``
answers "not assessable" on format version 1 and later, ``other_id`` reports S5 as
S8, and ``plain_text`` prints text instead of JSON. ``drops_last_frame`` never reads the
last frame of a zstd log and says how many events it judged (a silent loss). The newer scripts also run by
path from any directory (``python tests/broken_checkers/serve.py miss_rule``).
"""

"""Deliberately broken checkers: each wraps the built-in checker and plants one defect.

They exist to prove the campaign finds and minimises what it claims to: a rule
switched off (miss), a rule firing on clean logs (false alarm), a rule reporting
the wrong seq (wrong place), and a crash on some inputs. Each is usable as
``py:tests.broken_checkers.<name>:check`` and as ``cmd:'python -m
tests.broken_checkers.<name> {log}'``.
"""

from __future__ import annotations
class Stats: pass
def coverage_stats(logs): return Stats()

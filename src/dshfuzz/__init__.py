"""dshfuzz: a property-based fuzzer and mutation-test harness for DSH session-log checkers."""

__version__ = "0.1.0"

__all__ = ["__version__"]

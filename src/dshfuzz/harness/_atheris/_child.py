"""The fuzzing child process: libFuzzer (through atheris) driving one target.

Run as a script, never imported by the runner: ``atheris.Fuzz()`` ends the
process, and the coverage instrumentation must see dshfuzz's reader and checker
modules imported for the first time, which ``python -m dshfuzz.harness...``
would already have done through the package's ``__init__``. Only the code under
test (``dshfuzz.model``, ``dshfuzz.checker``, ``dshfuzz.oracle``) is
instrumented; the mutators, generators and the standard library are not, so
coverage counts the targets' own branches. A ``py:module:function`` target
instruments its own module instead (imported from the current directory).

Usage: ``python _child.py TARGET ARGV0 SHARE INSTRUMENT [libFuzzer flags and inputs]``.
``ARGV0`` is the fuzzer's ``argv[0]``: an executable launcher that re-runs this
child for ``TARGET``, because libFuzzer's crash minimiser re-executes it.
``SHARE`` is the custom mutator's structured share; ``INSTRUMENT`` is ``0`` to
skip the instrumentation (seconds of start-up) when only replaying inputs.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

_INSTRUMENTED = ("dshfuzz.model", "dshfuzz.checker", "dshfuzz.oracle")


def _import_instrumented(target: str) -> None:
    import atheris

    names: tuple[str, ...] = _INSTRUMENTED
    if target.startswith("py:"):
        names = (target[3:].partition(":")[0],)
        sys.path.insert(0, os.getcwd())
    with atheris.instrument_imports(include=sorted({n.split(".")[0] for n in names})):
        for name in names:
            package = importlib.import_module(name)
            for module in pkgutil.walk_packages(getattr(package, "__path__", []), prefix=f"{name}."):
                importlib.import_module(module.name)


def main(argv: list[str]) -> None:
    import atheris

    target_name, launcher, share, instrument, *libfuzzer = argv
    if instrument != "0":
        _import_instrumented(target_name)
    from dshfuzz.harness._atheris._targets import resolve_target

    target = resolve_target(target_name)

    def test_one_input(data: bytes) -> None:
        target.run(data)

    if float(share) == 0.0:  # libFuzzer's own mutator alone (the minimiser, replays): no edits to load
        atheris.Setup([launcher, *libfuzzer], test_one_input)
    else:
        from dshfuzz.harness._atheris._mutator import StructuredMutator

        def byte_mutate(data: bytes, max_size: int) -> bytes:
            # looked up per call: Fuzz() rebinds it to the live libFuzzer
            mutated: bytes = atheris.Mutate(data, max_size)
            return mutated

        mutator = StructuredMutator(
            target.compression, target.shape, byte_mutate, structured_share=float(share)
        )
        atheris.Setup(
            [launcher, *libfuzzer],
            test_one_input,
            custom_mutator=mutator.mutate,
            custom_crossover=mutator.crossover,
        )
    atheris.Fuzz()


if __name__ == "__main__":
    sys.path.pop(0)  # this script's directory: its private modules are imported through the package
    main(sys.argv[1:])

"""The library leaves the process's cyclic collector as its caller set it; the command line,
whose process it is, pauses it around reading and checking (issue 19, item 4).

A paused collector runs no automatic collection, so a read that paused it shows no
collection inside the reader in ``gc.callbacks`` even with a collection due at every
allocation; a read that left it alone shows some. Each test observes the collector *during*
the work, not only after it: a pause that is restored afterwards is still a process-wide
change while it lasts, visible to every other thread.
"""

from __future__ import annotations

import gc
import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dshfuzz.checker import CheckOptions, check_path, check_stream
from dshfuzz.checker._serve import answer, serve
from dshfuzz.cli import cyclic_gc_paused, main
from dshfuzz.model import FileBytes, parse_log, read_log, stream_log

DATA = Path(__file__).resolve().parent.parent / "data"
LOGS = [DATA / "valid-v0.jsonl", DATA / "valid-v0.jsonl.zstd"]


READER = sys.modules["dshfuzz.model._reader"].__file__


def _inside_a_read() -> bool:
    frame = sys._getframe(2)  # the code that allocated (above the callback and `note`)
    while frame is not None:
        if frame.f_code.co_name == "feed" and frame.f_code.co_filename == READER:
            return True
        frame = frame.f_back
    return False


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the automatic collections that run while the reader takes in
    its text (``_Reader.feed`` on the stack) during the test, with a collection due
    at every container allocation; the collector's state, thresholds and callbacks are
    restored afterwards."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and _inside_a_read():
            seen.append(info["generation"])

    enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.enable()
    gc.set_threshold(1, 10, 10)
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*threshold)
        (gc.enable if enabled else gc.disable)()


def _collects_during(work: Callable[[], object], seen: list[int]) -> bool:
    del seen[:]
    work()
    return bool(seen)


class Watcher:
    """A stream consumer that notes the collector's state at each step of the read."""

    def __init__(self) -> None:
        self.states: list[bool] = []

    def begin(self, log: object) -> None:
        self.states.append(gc.isenabled())

    def row(self, first: int, stop: int, head: object) -> None:
        self.states.append(gc.isenabled())


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_a_streamed_read_runs_with_the_collector_the_caller_left_on(path: Path) -> None:
    watcher = Watcher()
    assert gc.isenabled()
    with FileBytes.open(path) as data:
        stream_log(data, watcher)
    assert len(watcher.states) > 1 and all(watcher.states), "the read paused the process's collector"
    assert gc.isenabled()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_reading_and_checking_through_the_library_leave_the_collector_on(path: Path, collections: list[int]) -> None:
    data = path.read_bytes()
    works: dict[str, Callable[[], object]] = {
        "parse_log": lambda: parse_log(data, path=str(path)),
        "read_log": lambda: read_log(path),
        "check_path": lambda: check_path(path, CheckOptions()),
        "check_stream": lambda: check_stream(data, path=str(path), options=CheckOptions()),
        "serve.answer": lambda: answer(json.dumps({"id": 1, "path": str(path)}).encode(), CheckOptions()),
    }
    for name, work in works.items():
        assert _collects_during(work, collections), f"{name} paused the process's collector"
        assert gc.isenabled(), f"{name} left the collector off"


def test_a_collector_the_caller_paused_stays_paused(collections: list[int]) -> None:
    gc.disable()
    read_log(LOGS[1])
    with cyclic_gc_paused():
        pass
    assert not gc.isenabled()
    assert not collections


def test_the_library_server_changes_nothing_unless_its_caller_asks(collections: list[int]) -> None:
    request = json.dumps({"id": 1, "path": str(LOGS[0])}).encode() + b"\n"
    out = io.BytesIO()
    assert _collects_during(lambda: serve(io.BytesIO(request), out, CheckOptions()), collections)
    assert json.loads(out.getvalue().splitlines()[1])["findings"] is not None

    states: list[bool] = []

    def around() -> Any:
        states.append(gc.isenabled())
        return cyclic_gc_paused()

    serve(io.BytesIO(request * 2), io.BytesIO(), CheckOptions(), around=around)
    assert states == [True, True] and gc.isenabled(), "the collector runs again between requests"


@pytest.mark.parametrize(
    "argv",
    [["check", "--json", str(LOGS[1])], ["recover", "--json", str(LOGS[1])]],
    ids=["check", "recover"],
)
def test_the_command_line_pauses_the_collector_while_it_reads_and_restores_it(
    argv: list[str], collections: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    # what `dshfuzz check` and `dshfuzz recover` do around their reads, with the collector due at
    # every allocation: not one collection runs, and the collector is back on afterwards
    del collections[:]
    status = main(argv)
    assert status in (0, 1), capsys.readouterr().err
    assert json.loads(capsys.readouterr().out.splitlines()[0])
    assert not collections, "the command ran collections: it did not pause the collector"
    assert gc.isenabled()

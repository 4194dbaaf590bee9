"""``OfficialOracle``: the official DSH layers as a Python API.

A long-lived Node server (``js/server.mjs``) runs the official packages; this
client speaks its JSON-lines protocol. Guarantees:

- replies are matched to requests strictly in order and checked by id;
- a request that exceeds ``timeout`` kills the server and raises
  :class:`OracleTimeout`; a server that dies raises :class:`OracleCrashed`; in
  both cases the next call starts a fresh server transparently;
- every method is thread-safe (one lock serialises access to the server);
- the server only ever reads files (read-only official entry points) and never
  touches the network; inputs are serialised, so Python values are never mutated.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

from dshfuzz.model import dumps, loads

from ._layers import LAYERS
from ._server import ServerProcess, node_executable, unavailable_reason
from ._verdict import (
    LayerVerdict,
    OfficialError,
    OfficialRefusal,
    OracleCrashed,
    OracleError,
    OracleProtocolError,
    OracleTimeout,
    OracleUnavailable,
    ReachedFirst,
    RefusalSite,
    Reply,
)

__all__ = ["COVERAGE_GRANULARITIES", "CheckReport", "CoverageGranularity", "Flight", "OfficialOracle", "RawLog"]

CoverageGranularity = Literal["function", "block"]
COVERAGE_GRANULARITIES: tuple[CoverageGranularity, ...] = ("function", "block")
"""What official code an oracle with coverage counts: functions (V8's binary function coverage,
next to free) or blocks (V8 block coverage, which slows the official code)."""

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class RawLog:
    """A file as the official reader sees it, undecoded: the header value, the
    storage rows (packed rows not expanded) and whether a torn final line was
    dropped."""

    compression: str
    header: Any
    rows: list[Any]
    torn: bool


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Every requested layer's verdict on one log. ``decode_error`` is set when a
    file could not be decoded into events, so only its file layers ran."""

    layers: dict[str, LayerVerdict]
    decode_error: OfficialError | None = None

    @property
    def ok(self) -> bool:
        return self.decode_error is None and all(v.ok for v in self.layers.values())


T = TypeVar("T")


class Flight(Generic[T]):
    """Requests sent at once (:meth:`OfficialOracle.in_flight`, :meth:`OfficialOracle.checking`):
    call it to collect their replies (once; later calls return the same). :meth:`ready` says
    whether collecting would return at once."""

    __slots__ = ("_collect", "_ready")

    def __init__(self, collect: Callable[[], T], ready: Callable[[], bool]) -> None:
        self._collect = collect
        self._ready = ready

    def __call__(self) -> T:
        return self._collect()

    def ready(self) -> bool:
        """Every reply has arrived, or the server is gone (collecting reports it). Exact for the
        oldest flight not yet collected: the server answers in the order it was asked."""
        return self._ready()


def _answered(results: list[Reply | OracleError | None]) -> list[Reply | OracleError]:
    """``results`` once every request has its reply or its error (collecting fills every slot)."""
    answered = [result for result in results if result is not None]
    assert len(answered) == len(results), "every request has its reply or its error"
    return answered


def _raw(value: Any) -> Any:
    """A JSON value from a raw value or a ``dshfuzz.model`` Event/SessionHeader."""
    return getattr(value, "raw", value)


def _log_fields(events: Sequence[Any] | None, header: Any, path: PathLike | None) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if events is not None:
        fields["events"] = [_raw(e) for e in events]
    if header is not None:
        fields["header"] = _raw(header)
    if path is not None:
        fields["path"] = os.fspath(path)
    return fields


class OfficialOracle:
    """Context manager over one official-oracle server (started lazily).

    ``timeout`` (seconds) bounds each request, ``startup_timeout`` the server's
    start (loading the packages), which is never charged to a request;
    ``debug_ops`` enables the server's ``__crash`` and ``__hang`` ops (tests of
    the recovery paths only).

    ``coverage`` (``"function"`` or ``"block"``) starts the server measuring official
    coverage: every reply then says which refusal sites (:meth:`refusal_sites`) and how
    many functions (or V8 blocks) it reached first on this client (``Reply.reached``), and
    :attr:`reached_sites` holds every site reached so far. The client keeps the union of
    sites, so a server restarted after a timeout or a crash reports none twice.
    """

    def __init__(
        self,
        *,
        timeout: float = 120.0,
        startup_timeout: float = 120.0,
        debug_ops: bool = False,
        node: PathLike | None = None,
        coverage: CoverageGranularity | None = None,
    ) -> None:
        if coverage is not None and coverage not in COVERAGE_GRANULARITIES:
            raise ValueError(f"coverage must be one of {', '.join(COVERAGE_GRANULARITIES)}, not {coverage!r}")
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self._debug_ops = debug_ops
        self.coverage = coverage
        self._reached: set[str] = set()
        self._sites: tuple[RefusalSite, ...] | None = None
        self._node = Path(node) if node is not None else None
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._server: ServerProcess | None = None
        self._closed = False

    def __enter__(self) -> OfficialOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the server (close its stdin, wait, kill on timeout). Idempotent."""
        with self._lock:
            self._closed = True
            if self._server is not None:
                self._server.close()
                self._server = None

    @property
    def stderr_tail(self) -> str:
        """The last lines the current server wrote to stderr (bounded buffer).
        Lock-free, so it can be read while another thread waits on a call."""
        server = self._server
        return server.stderr_tail() if server else ""

    def _ensure(self) -> ServerProcess:
        if self._closed:
            raise OracleError("the official oracle was closed")
        if self._server is not None and not self._server.alive:
            self._server.close(grace=0)
            self._server = None
        if self._server is None:
            if self._node is None:
                reason = unavailable_reason()
                if reason is not None:
                    raise OracleUnavailable(reason)
            node = self._node or node_executable()
            assert node is not None
            try:
                server = ServerProcess(node, debug_ops=self._debug_ops, coverage=self.coverage)
            except OSError as exc:
                raise OracleUnavailable(f"cannot start {node}: {exc}") from exc
            self._await_ready(server)
            self._server = server
        return self._server

    def _await_ready(self, server: ServerProcess) -> None:
        try:
            line = server.receive(self.startup_timeout)
        except queue.Empty:
            server.kill()
            raise OracleTimeout("startup", self.startup_timeout) from None
        if line is None:
            code = server.returncode()
            server.close(grace=0)
            raise OracleCrashed("startup", code, server.stderr_tail())
        if not (isinstance(ready := loads(line), dict) and ready.get("ready") is True):
            server.kill()
            raise OracleProtocolError(f"server did not announce itself: {line[:200]!r}")

    def _discard(self, server: ServerProcess, *, kill: bool) -> int | None:
        if kill:
            server.kill()
        code = server.returncode()
        server.close(grace=0)
        if self._server is server:
            self._server = None
        return code

    # -- transport ------------------------------------------------------------

    def _encode(self, request: Mapping[str, Any], rid: int) -> bytes:
        """One request line; a ``path`` is made absolute (the server runs in ``js/``)."""
        fields = dict(request)
        if fields.get("path") is not None:
            fields["path"] = os.path.abspath(os.fspath(fields["path"]))
        return (dumps({"id": rid, **fields}) + "\n").encode("utf-8")

    def _await(self, server: ServerProcess, rid: int, op: str, path: PathLike | None, timeout: float) -> Reply:
        try:
            line = server.receive(timeout)
        except queue.Empty:
            self._discard(server, kill=True)
            raise OracleTimeout(op, timeout) from None
        if line is None:
            tail = server.stderr_tail()
            raise OracleCrashed(op, self._discard(server, kill=False), tail)
        value = loads(line)
        if not isinstance(value, dict) or value.get("id") != rid:
            self._discard(server, kill=True)
            raise OracleProtocolError(f"reply out of order for op {op!r}: expected id {rid}, got {line[:200]!r}")
        error = None if value.get("ok") else OfficialError.from_json(value.get("error") or {}, path=path)
        reached = self._reached_first(value.get("coverage")) if self.coverage else None
        return Reply(rid, bool(value.get("ok")), value.get("result"), error, float(value.get("ms", 0.0)), reached)

    def _reached_first(self, coverage: Any) -> ReachedFirst:
        """A reply's coverage, less the sites this client heard of before (a restarted server
        starts its own count again)."""
        if not isinstance(coverage, dict):
            return ReachedFirst()
        sites = tuple(s for s in coverage.get("sites") or () if isinstance(s, str) and s not in self._reached)
        self._reached.update(sites)
        code = coverage.get("code")
        return ReachedFirst(sites, code if isinstance(code, int) else 0)

    @property
    def reached_sites(self) -> frozenset[str]:
        """Every refusal site reached so far (coverage on; empty otherwise)."""
        with self._lock:
            return frozenset(self._reached)

    def refusal_sites(self) -> tuple[RefusalSite, ...]:
        """Every refusal site (``throw`` statement) of the official packages a log passes
        through, in package and source order (asked once; coverage need not be on)."""
        with self._lock:
            if self._sites is None:
                self._sites = tuple(
                    RefusalSite(site["id"], module["package"], module["file"], site["line"], site["column"], site["message"])
                    for module in self._value("sites") for site in module["sites"]
                )
            return self._sites

    def call(self, op: str, *, timeout: float | None = None, **fields: Any) -> Reply:
        """Send one request and wait for its reply (``timeout`` overrides the default)."""
        with self._lock:
            server = self._ensure()
            rid = next(self._ids)
            if not server.send(self._encode({"op": op, **fields}, rid)):
                raise OracleCrashed(op, self._discard(server, kill=False), server.stderr_tail())
            reply = self._await(server, rid, op, fields.get("path"), timeout or self.timeout)
        if reply.error is not None and reply.error.name == "ProtocolError":
            raise OracleProtocolError(f"op {op!r}: {reply.error.message}")
        return reply

    def pipeline(
        self, requests: Iterable[Mapping[str, Any]], window: int = 64, *, timeout: float | None = None
    ) -> list[Reply | OracleError]:
        """Send many requests (``{"op": ..., ...fields}``) with at most ``window``
        unanswered; results come back in request order.

        A request the server never answers (timeout or crash) yields its
        :class:`OracleError` in place of a reply; the unanswered requests behind
        it are re-sent to a fresh server. A request the server could not parse
        comes back as a reply whose error is named ``ProtocolError``.
        """
        pending_requests = list(requests)
        results: list[Reply | OracleError | None] = [None] * len(pending_requests)
        with self._lock:
            todo = list(range(len(pending_requests)))
            while todo:
                todo = self._pipeline_once(pending_requests, todo, results, max(1, window), timeout or self.timeout)
        return _answered(results)

    def _pipeline_once(
        self,
        requests: list[Mapping[str, Any]],
        todo: list[int],
        results: list[Reply | OracleError | None],
        window: int,
        timeout: float,
    ) -> list[int]:
        """Run ``todo`` on one server; returns the indexes still unanswered when it failed."""
        server = self._ensure()
        in_flight: list[tuple[int, int]] = []
        cursor = 0
        while cursor < len(todo) or in_flight:
            while cursor < len(todo) and len(in_flight) < window:
                index = todo[cursor]
                rid = next(self._ids)
                if not server.send(self._encode(requests[index], rid)):
                    break
                in_flight.append((index, rid))
                cursor += 1
            if not in_flight:
                results[todo[cursor]] = OracleCrashed(
                    str(requests[todo[cursor]].get("op")), self._discard(server, kill=False), server.stderr_tail()
                )
                return todo[cursor + 1 :]
            index, rid = in_flight.pop(0)
            try:
                op, path = str(requests[index].get("op")), requests[index].get("path")
                results[index] = self._await(server, rid, op, path, timeout)
            except (OracleTimeout, OracleCrashed) as failure:
                results[index] = failure
                return [i for i, _ in in_flight] + todo[cursor:]
        return []

    @contextmanager
    def in_flight(
        self, requests: Iterable[Mapping[str, Any]], *, timeout: float | None = None
    ) -> Iterator[Flight[list[Reply | OracleError]]]:
        """Send every request now and yield the :class:`Flight` that collects their replies, in
        request order, with :meth:`pipeline`'s guarantees: the caller works while the server
        judges. The server is the caller's until the block ends (other callers wait);
        replies not collected by then are collected on the way out, and when the block
        raises, the server is discarded instead (the next call starts a fresh one)."""
        asked = list(requests)
        results: list[Reply | OracleError | None] = [None] * len(asked)
        with self._lock:
            server = self._ensure()
            sent = [(index, next(self._ids)) for index in range(len(asked))]
            # one write for all of them: one wake-up of the server, not one per request
            if sent and not server.send(b"".join(self._encode(asked[i], rid) for i, rid in sent)):
                sent = []  # the server is gone: _collect asks a fresh one
            collected = False

            def collect() -> list[Reply | OracleError]:
                nonlocal collected
                if not collected:
                    collected = True
                    self._collect(server, asked, sent, results, timeout or self.timeout)
                return _answered(results)

            def ready() -> bool:
                # the replies of flights sent earlier come first: exact for the oldest uncollected one
                return collected or not sent or server.replies.qsize() >= len(sent) or not server.alive

            try:
                yield Flight(collect, ready)
            except BaseException:
                if not collected and sent:  # unread replies would answer the next caller's requests
                    self._discard(server, kill=True)
                raise
            collect()

    def _collect(
        self,
        server: ServerProcess,
        requests: list[Mapping[str, Any]],
        sent: list[tuple[int, int]],
        results: list[Reply | OracleError | None],
        timeout: float,
    ) -> None:
        """Read the replies to ``sent``; what failed or was never sent goes to a fresh server."""
        todo = list(range(len(sent), len(requests)))
        for position, (index, rid) in enumerate(sent):
            try:
                op, path = str(requests[index].get("op")), requests[index].get("path")
                results[index] = self._await(server, rid, op, path, timeout)
            except (OracleTimeout, OracleCrashed) as failure:
                results[index] = failure
                todo = [i for i, _ in sent[position + 1 :]] + todo
                break
        while todo:
            todo = self._pipeline_once(requests, todo, results, 64, timeout)

    @contextmanager
    def checking(
        self,
        files: Sequence[tuple[PathLike, Iterable[str]]],
        *,
        timeout: float | None = None,
        server_seconds: Callable[[float], None] | None = None,
        reached: Callable[[int, ReachedFirst], None] | None = None,
    ) -> Iterator[Flight[list[dict[str, LayerVerdict] | OracleError]]]:
        """:meth:`check` of each ``(path, layers)`` at once (:meth:`in_flight`): yields the
        :class:`Flight` that collects each file's verdicts, or the :class:`OracleError` that
        stopped them, in order. A file with no layers gets no request and no verdicts.
        ``server_seconds`` hears the seconds the server spent judging them (its own clock);
        ``reached`` hears, by file index, the official coverage reached first (coverage on): the
        flight's whole coverage is reported with its last file (one V8 take per flight)."""
        wanted = [list(dict.fromkeys(layers)) for _, layers in files]
        for layers in wanted:
            unknown = [n for n in layers if n not in LAYERS]
            if unknown:
                raise ValueError(f"unknown layer(s) {', '.join(unknown)}; expected a subset of {', '.join(LAYERS)}")
        asked = [i for i, layers in enumerate(wanted) if layers]
        requests: list[dict[str, Any]] = [
            {"op": "all", "path": os.fspath(files[i][0]), "options": {"layers": wanted[i]}} for i in asked
        ]
        if self.coverage and reached is not None:
            for request in requests[:-1]:  # one take for the flight: the last reply reports it whole
                request["coverage"] = "defer"
        with self.in_flight(requests, timeout=timeout) as replies:

            def collect() -> list[dict[str, LayerVerdict] | OracleError]:
                verdicts: list[dict[str, LayerVerdict] | OracleError] = [{} for _ in files]
                got = replies()
                for i, reply in zip(asked, got, strict=True):
                    verdicts[i] = self._verdicts_of(reply, files[i][0])
                    if reached is not None and isinstance(reply, Reply) and reply.reached is not None:
                        reached(i, reply.reached)
                if server_seconds is not None:
                    server_seconds(sum(r.ms for r in got if isinstance(r, Reply)) / 1000)
                return verdicts

            yield Flight(collect, replies.ready)

    @staticmethod
    def _verdicts_of(reply: Reply | OracleError, path: PathLike) -> dict[str, LayerVerdict] | OracleError:
        if isinstance(reply, OracleError):
            return reply
        if not reply.ok:
            assert reply.error is not None
            if reply.error.name == "ProtocolError":
                return OracleProtocolError(f"op 'all': {reply.error.message}")
            return OfficialRefusal("all", reply.error)
        return {name: LayerVerdict.from_json(name, value, path=path) for name, value in reply.result["layers"].items()}

    # -- verdicts -------------------------------------------------------------

    def layer(
        self,
        name: str,
        *,
        events: Sequence[Any] | None = None,
        header: Any = None,
        path: PathLike | None = None,
        rows: Sequence[Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> LayerVerdict:
        """One layer's verdict on inline ``events`` (or ``rows``) or a file ``path``."""
        if name not in LAYERS:
            raise ValueError(f"unknown layer {name!r}; expected one of {', '.join(LAYERS)}")
        fields = _log_fields(events, header, path)
        if rows is not None:
            fields["rows"] = [_raw(r) for r in rows]
        if options:
            fields["options"] = dict(options)
        reply = self.call(name, **fields)
        return LayerVerdict(name, reply.ok, reply.error, reply.result)

    def check_report(
        self,
        *,
        events: Sequence[Any] | None = None,
        header: Any = None,
        path: PathLike | None = None,
        layers: Iterable[str] | None = None,
    ) -> CheckReport:
        """Every applicable layer (or ``layers``) on inline events or a file.

        Inline: the event layers, plus ``released`` when ``header`` is given. File:
        ``load``/``loadApp``/``released`` on the bytes and the event layers on the
        decoded rows; when the rows cannot be decoded, ``decode_error`` says why
        and only the file layers are reported.
        """
        if (events is None) == (path is None):
            raise ValueError("check needs exactly one of events= or path=")
        fields = _log_fields(events, header, path)
        if layers is not None:
            wanted = list(dict.fromkeys(layers))
            unknown = [n for n in wanted if n not in LAYERS]
            if unknown:
                raise ValueError(f"unknown layer(s) {', '.join(unknown)}; expected a subset of {', '.join(LAYERS)}")
            fields["options"] = {"layers": wanted}
        reply = self.call("all", **fields)
        if not reply.ok:
            assert reply.error is not None
            raise OfficialRefusal("all", reply.error)
        verdicts = {
            name: LayerVerdict.from_json(name, value, path=path) for name, value in reply.result["layers"].items()
        }
        decode = reply.result.get("decodeError")
        return CheckReport(verdicts, OfficialError.from_json(decode, path=path) if decode else None)

    def check(
        self,
        *,
        events: Sequence[Any] | None = None,
        header: Any = None,
        path: PathLike | None = None,
        layers: Iterable[str] | None = None,
    ) -> dict[str, LayerVerdict]:
        """``check_report(...).layers``: layer name -> verdict, in canonical order."""
        return self.check_report(events=events, header=header, path=path, layers=layers).layers

    # -- official functions -----------------------------------------------------

    def _value(self, op: str, **fields: Any) -> Any:
        reply = self.call(op, **fields)
        if not reply.ok:
            assert reply.error is not None
            raise OfficialRefusal(op, reply.error)
        return reply.result

    def fold(self, events: Sequence[Any]) -> dict[str, Any]:
        """``foldSurface(events)`` -> ``{nodes, replacements}``; raises :class:`OfficialRefusal`."""
        return cast("dict[str, Any]", self._value("fold", events=[_raw(e) for e in events]))

    def pack(self, events: Sequence[Any]) -> list[Any]:
        """``packChunkRuns(events)`` -> storage rows."""
        return cast("list[Any]", self._value("pack", events=[_raw(e) for e in events]))

    def unpack(self, rows: Sequence[Any]) -> list[Any]:
        """``rows.flatMap(decodeStorageRecord)`` -> events; raises :class:`OfficialRefusal`
        carrying the official message for a malformed row."""
        return cast("list[Any]", self._value("unpack", rows=[_raw(r) for r in rows]))

    def closers(self, events: Sequence[Any]) -> list[Any]:
        """``interruptedTurnClosers(events)``: what a crash repair would append."""
        return cast("list[Any]", self._value("closers", events=[_raw(e) for e in events]))

    def wire(self, events: Sequence[Any]) -> dict[str, Any] | None:
        """The DeepSeek request body for the surface at the end of the log (offline),
        or None when the log has no request/header."""
        return cast("dict[str, Any] | None", self._value("wire", events=[_raw(e) for e in events])["body"])

    def read_raw(self, path: PathLike) -> RawLog:
        """The official raw read of a file: header, rows, torn flag."""
        value = self._value("readRaw", path=os.fspath(path))
        return RawLog(value["compression"], value["header"], value["rows"], bool(value["torn"]))

    def version(self) -> dict[str, Any]:
        """Node version, session format version, package versions, layer names."""
        return cast("dict[str, Any]", self._value("version"))

    def ping(self) -> bool:
        return bool(self._value("ping") == "pong")

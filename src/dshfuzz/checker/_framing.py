"""Framing rules Z1-Z5, read off the physical layer the model's reader recorded.

The official zstd container (SPJ:503-566, 955-1019) is a header-only first frame
followed by one checksummed frame per append batch, each ending on a record
boundary; an incomplete final frame is a torn tail the loader recovers from. Z3
(an empty session) applies to both containers; so does Z1, since a JSONL file
whose last line lacks its newline is torn in the same sense. Z3 is silent where a reader limit
stopped the read before any event: the limit's finding (L1-L4) says why none was read, and the
file may hold events beyond it.
"""

from __future__ import annotations

from collections.abc import Iterator

from dshfuzz.contracts.rules import OfficialLayer as L
from dshfuzz.contracts.rules import RuleId as R
from dshfuzz.contracts.rules import Severity
from dshfuzz.model import Frame, TornTail

from ._context import CheckContext
from ._finding import Finding
from ._run import rule_pass


@rule_pass(R.Z1, R.Z2, R.Z3, R.Z4, R.Z5)
def framing_rules(ctx: CheckContext) -> Iterator[Finding]:
    """Z1-Z5. A pass, not a walk: it reads only the physical layer (frames, lines, rows,
    the torn tail), which a streaming reader still provides."""
    log = ctx.log
    torn = log.torn
    # the reader stops replaying the official byte layer at a foreign version; the physical layer still shows a tear
    if torn is None and log.compression == "zstd" and log.frames and log.frames[-1].status == "torn":
        last = log.frames[-1]
        torn = TornTail(truncate_to=last.offset, frame=last.index)
    elif torn is None and log.compression == "none" and len(log.lines) > 1 and not log.lines[-1].terminated:
        last_line = log.lines[-1]
        torn = TornTail(truncate_to=last_line.offset or 0, line=last_line.number)
    if torn is not None:
        if torn.frame is not None:
            where = f"zstd frame {torn.frame} is incomplete"
        elif not log.lines or not log.lines[-1].terminated or torn.line is None:
            where = "the last line has no newline"
        else:  # every line ends on its newline: the reader cut the log at a defect no turn/end follows (SPJ:272-300)
            where = f"no turn/end follows the defect at line {torn.line}, which the official reader treats as a torn write"
        yield ctx.finding(
            R.Z1,
            f"torn tail: {where}; the official reader keeps the log up to byte {torn.truncate_to} "
            f"({torn.recovered_lines} complete record(s) recovered from the torn part)",
            line=torn.line,
            frame=torn.frame,
            offset=torn.truncate_to,
            context={"truncateTo": torn.truncate_to, "recoveredLines": torn.recovered_lines},
        )
    # a reader limit that stopped the read before any event (L1-L4) says nothing of the events beyond it
    if log.header is not None and log.header.is_object and not log.rows and not log.events and log.limit is None:
        yield ctx.finding(R.Z3, "session has a header but no events (created empty, or its writes never landed)", line=1)
    if log.compression != "zstd":
        return
    frames = log.frames
    # a record may span frames: only the last whole frame must end on a record boundary (SPJ:984)
    last_whole = next((fr.index for fr in reversed(frames) if fr.status in ("complete", "not-record-aligned")), -1)
    # a streamed read keeps whole only the frames that are not complete (and the last): the rest need not be built
    kept = getattr(frames, "irregular", None)
    odd = frames if kept is None else [*kept.values(), *frames[-1:]]
    for fr in odd:
        if fr.status == "corrupt" or fr.status == "skippable":
            why = "invalid frame magic" if fr.status == "skippable" else "failed validation"
            yield ctx.finding(
                R.Z2,
                f"corrupt Zstandard session log: frame at byte {fr.offset} {why}" + (f" ({fr.error})" if fr.error else ""),
                frame=fr.index,
                offset=fr.offset,
                context={"size": fr.size, "status": fr.status},
            )
        elif fr.status == "not-record-aligned" and fr.index == last_whole:
            # only the format-0 loader walks frames; a later format's layers read the joined text and accept
            loader_only = fr.index == frames[-1].index
            later = loader_only and ctx.version is not None and ctx.version > 0
            yield ctx.finding(
                R.Z2,
                f"corrupt Zstandard session log: frame {fr.index} at byte {fr.offset} does not end on a record boundary "
                "(a complete frame contains a torn JSONL record)",
                frame=fr.index,
                offset=fr.offset,
                context={"size": fr.size, "status": fr.status},
                # released concatenates every frame's text (SPJ:879): only the loader's frame walk (SPJ:984) checks the end
                refused_by=() if later else (L.LOAD,) if loader_only else None,
                severity=Severity.WARNING if later else None,
            )
    if not log.frames or (log.limit is not None and log.limit.frame in (None, 0)):
        # a limit that stopped the read inside the header frame (or anywhere unplaced) left that
        # frame's lines unrecorded: its shape is unknown, and the limit's finding says why
        return
    first = log.frames[0]
    shape = _header_frame_shape(first)
    if shape is not None:
        yield ctx.finding(
            R.Z4,
            f"corrupt Zstandard session log: first frame is not exactly one header line ({shape})",
            frame=0,
            offset=first.offset,
            line=1,
            context={"lines": len(first.lines), "endsOnNewline": first.status == "complete"},
        )
        if len(log.frames) == 1 and first.status == "complete" and len(first.lines) > 1:
            yield ctx.finding(
                R.Z5,
                f"the whole {len(first.lines)}-line log is one zstd frame; the official shape is a header frame "
                "plus one frame per append batch",
                frame=0,
                offset=first.offset,
                context={"lines": len(first.lines)},
            )


def _header_frame_shape(first: Frame) -> str | None:
    """What breaks ``assertZstdHeaderFrame`` (SPJ:741) in the decoded first frame, or ``None``.

    The loader asks that the plaintext be non-empty and that its first newline be its last
    byte. Read off the frame record: no line starts in an empty frame; a frame whose plaintext
    does not end on a newline is ``not-record-aligned`` (its last line runs on into the next
    frame: the header itself, or an event after it); a frame ending on a newline holds
    exactly one newline when exactly one line starts in it. A frame that does not decode is
    Z2's, a torn one Z1's: the loader never reaches the header check for them."""
    if first.status not in ("complete", "not-record-aligned"):
        return None
    count = len(first.lines)
    if count == 0:
        return "the frame is empty"
    if first.status == "not-record-aligned":
        if count == 1:
            return "the header line has no newline in it: the line runs on into the next frame"
        return (f"it holds the header line and the start of line {first.lines[-1]}, "
                "which runs on into the next frame")
    if count > 1:
        return f"it holds {count} lines: the header and {count - 1} more"
    return None

"""A campaign's example database: where Hypothesis keeps the examples that failed, so
that the next campaign, on this machine or another, replays them before anything new.

Campaigns keep none by default: the corpus is the record of what was found. With
``--database`` every finding's witness (its minimal log, with what its mutator declared)
is saved as it settles, and every later campaign that reaches the database judges the
saved witnesses before its first round: a failing example found on one machine is
replayed first on the next run anywhere. The witness is kept as a log, not as
Hypothesis' choice sequence: a campaign's rounds are seeded, and Hypothesis keeps no
database for a seeded run; a log also survives changes to the generators.

``redis://HOST:PORT/N`` shares one database between machines (Hypothesis'
``RedisExampleDatabase``; the ``redis`` client is the ``cluster`` extra); anything else
is a directory, made if need be.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ._judge import Example

if TYPE_CHECKING:
    from dshfuzz.model import Compression

__all__ = ["DatabaseError", "example_database", "save_witness", "saved_witnesses"]


class DatabaseError(Exception):
    """The database cannot be used; the message names it and the fix, in one line."""


def example_database(spec: str, *, check: bool = True, given_as: str = "--database") -> Any:
    """The Hypothesis example database ``spec`` names; with ``check``, reached once now
    (a server that does not answer is a :class:`DatabaseError`, not a failed campaign).
    ``given_as`` is how the user named it (an option, an environment variable), for messages."""
    if spec.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise DatabaseError(
                f"{given_as} {spec}: the redis client is not installed; pip install 'dshfuzz[cluster]'"
            ) from None
        try:
            client = redis.Redis.from_url(spec, socket_connect_timeout=5, socket_timeout=30)
            if check:
                client.ping()
        except (redis.RedisError, ValueError) as exc:
            raise DatabaseError(f"{given_as} {spec}: cannot reach the redis server ({exc})") from None
        return RedisExampleDatabase(client)
    from hypothesis.database import DirectoryBasedExampleDatabase

    path = Path(spec)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseError(f"{given_as} {spec}: cannot use that folder ({exc.strerror or exc})") from None
    return DirectoryBasedExampleDatabase(str(path))


WITNESSES = b"dshfuzz-campaign:witnesses"
"""The key every campaign's witnesses are saved under, whatever the checker: a log that
failed one version of a checker is what the next version should meet first."""

REPLAY_LIMIT = 256
"""A campaign replays at most this many saved witnesses before its first round."""


def save_witness(database: Any, example: Example) -> None:
    """Keep ``example`` (a finding's witness, with what its mutator declared) for later campaigns."""
    value = {
        "format": 1,
        "data": base64.b64encode(example.data).decode("ascii"),
        "compression": example.compression,
        "mutator": example.mutator,
        "expects": sorted(example.expects),
        "formatVersion": example.format_version,
        "description": example.description,
    }
    database.save(WITNESSES, json.dumps(value, sort_keys=True).encode())


def saved_witnesses(database: Any) -> list[Example]:
    """The witnesses saved so far (at most :data:`REPLAY_LIMIT`, in a stable order); an entry
    this version cannot read is skipped."""
    out: list[Example] = []
    for raw in sorted(database.fetch(WITNESSES)):
        try:
            value = json.loads(raw)
            out.append(
                Example(
                    data=base64.b64decode(value["data"]),
                    compression=cast("Compression", str(value["compression"])),  # as the witness was stored
                    mutator=value.get("mutator"),
                    expects=frozenset(value.get("expects") or ()),
                    description=str(value.get("description") or ""),
                    format_version=value.get("formatVersion"),
                )
            )
        except (ValueError, KeyError, TypeError):
            continue
        if len(out) >= REPLAY_LIMIT:
            break
    return out

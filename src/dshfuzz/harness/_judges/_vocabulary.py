"""What a checker claims: the rule ids it implements (its vocabulary) and the official
layers it answers for.

A rule outside the vocabulary is "not implemented", never missed. The built-in checker's
vocabulary is the whole registry; an external checker's, unless it declares one, the
contract catalog's.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path

from ._interface import CheckerSpecError

__all__ = [
    "catalog_rules",
    "declared_layers",
    "parse_checker_layers",
    "parse_checker_rules",
    "registry_rules",
]


@functools.cache
def registry_rules() -> frozenset[str]:
    """Every rule id of the registry (the built-in checker's vocabulary)."""
    from dshfuzz.checker import RULES

    return frozenset(str(rid) for rid in RULES)


@functools.cache
def catalog_rules() -> frozenset[str]:
    """The 46 ids of the seed-000 contract catalog: an external checker's default vocabulary.

    The registry's other rules (W3/W4 of seed 001, P5/W5 of seed 002, the resource limits
    L1-L4, G4 found by fuzzing) are dshfuzz's own additions, expected of an external
    checker only when it declares them."""
    from dshfuzz.checker import RULES

    return frozenset(str(rule.id) for rule in RULES.values() if rule.origin == "catalog")


def parse_checker_rules(text: str) -> frozenset[str]:
    """A vocabulary given on the command line (``--checker-rules FILE|ids``).

    ``text`` is a file holding ids separated by whitespace or commas (``#`` starts a
    comment) or a JSON list of strings, or else an inline list (``H1,R1,S5``). Ids
    unknown to the registry are kept (a checker may have rules of its own); no id at
    all is a :class:`CheckerSpecError`.
    """
    source = text.strip()
    where = f"--checker-rules {text!r}"
    path = Path(source) if source else None
    if path is not None and path.is_file():
        where = f"--checker-rules {source}"
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CheckerSpecError(f"{where}: cannot read the file: {exc}") from None
        if content.lstrip().startswith("["):
            try:
                listed = json.loads(content)
            except ValueError as exc:
                raise CheckerSpecError(f"{where}: not a JSON list of rule ids: {exc}") from None
            if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
                raise CheckerSpecError(f"{where}: a JSON vocabulary must be a list of rule-id strings")
            ids = [item.strip() for item in listed]
        else:
            content = "\n".join(line.partition("#")[0] for line in content.splitlines())
            ids = content.replace(",", " ").split()
    elif os.sep in source or source.endswith((".txt", ".json")):
        raise CheckerSpecError(f"{where}: no such file")
    else:
        ids = source.replace(",", " ").split()
    rules = frozenset(item for item in ids if item)
    if not rules:
        raise CheckerSpecError(f"{where}: no rule id given")
    return rules


_LOAD_ROUTES = frozenset({"loadApp", "loadDirect"})
"""The official load routes' names, which agree on every known input: a declaration of
either answers for ``load``."""


def declared_layers(names: Iterable[str], where: str) -> frozenset[str]:
    """The official layers a checker answers for, as a campaign names them (``loadApp`` and
    ``loadDirect`` are ``load``). A name no official layer has, or no name at all, is a
    :class:`CheckerSpecError` naming ``where`` the declaration came from."""
    from dshfuzz.contracts.layers import OfficialLayer

    listed = [name.strip() for name in names]
    known = {str(layer) for layer in OfficialLayer} | _LOAD_ROUTES
    unknown = sorted({name for name in listed if name not in known})
    if unknown:
        raise CheckerSpecError(
            f"{where}: {', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not an official layer "
            f"(the layers: {', '.join(str(layer) for layer in OfficialLayer if layer is not OfficialLayer.LOAD_APP)})"
        )
    layers = frozenset("load" if name in _LOAD_ROUTES else name for name in listed if name)
    if not layers:
        raise CheckerSpecError(f"{where}: no official layer given")
    return layers


def parse_checker_layers(text: str) -> frozenset[str]:
    """The official layers given on the command line (``--checker-layers load,released``)."""
    return declared_layers(text.replace(",", " ").split(), f"--checker-layers {text!r}")


def _rule_order(ids: Iterable[str]) -> list[str]:
    """``ids`` in the registry's order (the catalog's), which is how users read them."""
    from dshfuzz.checker import RULES

    order = {str(rid): n for n, rid in enumerate(RULES)}
    return sorted(ids, key=lambda r: order.get(r, len(order)))

"""The mutator registry: the built-in incident mutators, then third-party ones.

Built-ins are collected from the level modules in a fixed order (framing, lines,
envelope, surface, engine, wire, migration, hostile, shapes), each in definition order, so the
registry and the docs generated from it are stable. Third-party packages add
mutators through the ``dshfuzz.mutators`` entry-point group: each entry point
loads to a :class:`Mutator` or an iterable of them. A plugin that fails to load,
or reuses a built-in name, is skipped with a warning rather than taking the
whole tool down.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import entry_points
from types import MappingProxyType, ModuleType

from . import _engine, _envelope, _framing, _hostile, _lines, _migration, _shapes, _surface, _wire
from ._base import Edit, Mutator
from ._metamorphic import METAMORPHIC
from ._perturbations import PERTURBATIONS

__all__ = ["ENTRY_POINT_GROUP", "MUTATORS", "builtin_mutators", "get", "get_edit", "load_mutators"]

ENTRY_POINT_GROUP = "dshfuzz.mutators"

_MODULES: tuple[ModuleType, ...] = (_framing, _lines, _envelope, _surface, _engine, _wire, _migration, _hostile, _shapes)


def builtin_mutators() -> Iterator[Mutator]:
    for module in _MODULES:
        yield from (value for value in vars(module).values() if isinstance(value, Mutator))


def _plugins() -> Iterator[Mutator]:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
        except Exception as exc:  # a broken plugin must not break the registry
            warnings.warn(f"mutator plugin {ep.name!r} failed to load: {exc}", stacklevel=2)
            continue
        items: Iterable[object] = [loaded] if isinstance(loaded, Mutator) else loaded
        for item in items:
            if isinstance(item, Mutator):
                yield item
            else:
                warnings.warn(f"mutator plugin {ep.name!r} provided {item!r}, not a Mutator", stacklevel=2)


def load_mutators(*, plugins: bool = True) -> Mapping[str, Mutator]:
    """Name -> mutator: built-ins first, then plugins (skipped on a name clash)."""
    table: dict[str, Mutator] = {}
    for m in builtin_mutators():
        if m.name in table:
            raise RuntimeError(f"two built-in mutators named {m.name!r}")
        table[m.name] = m
    for m in _plugins() if plugins else ():
        if m.name in table:
            warnings.warn(f"mutator plugin {m.name!r} clashes with an existing mutator; skipped", stacklevel=2)
            continue
        table[m.name] = m
    return MappingProxyType(table)


MUTATORS: Mapping[str, Mutator] = load_mutators()


def get(name: str) -> Mutator:
    """The mutator called ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return MUTATORS[name]
    except KeyError:
        raise KeyError(f"unknown mutator {name!r}; known: {', '.join(MUTATORS)}") from None


def get_edit(name: str) -> Edit:
    """The mutator, robustness perturbation or metamorphic transform called ``name``."""
    for table in (MUTATORS, PERTURBATIONS, METAMORPHIC):
        if name in table:
            return table[name]
    known = [*MUTATORS, *PERTURBATIONS, *METAMORPHIC]
    raise KeyError(f"unknown mutator {name!r}; known: {', '.join(known)}")

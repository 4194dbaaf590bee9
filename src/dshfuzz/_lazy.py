"""Attributes a package exports but imports on first use (PEP 562).

A package whose public names live in heavy private modules lists where each name
lives; importing the package then costs nothing until a name is read, so a command
that needs one module does not pay for its siblings.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: reading ``name`` imports the private
    module ``package.<homes[name]>``, binds the name in the package and returns it."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

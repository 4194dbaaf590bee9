"""Tests that use the official layers are marked ``official`` through their fixture."""

from __future__ import annotations

import pytest


def test_every_test_requesting_the_official_layers_carries_the_official_mark(request: pytest.FixtureRequest):
    unmarked = [
        item.nodeid for item in request.session.items
        if {"official", "node24"} & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("official") is None
    ]
    assert not unmarked, unmarked

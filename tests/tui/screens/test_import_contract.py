"""Screens import no source: they ask the engine."""

from __future__ import annotations

from tests.import_contract import caught, contract_violations

SOURCES = ("ranktop.tui.sources",)


def test_no_screen_imports_a_source():
    modules, violations = contract_violations("ranktop.tui.screens", SOURCES)
    assert "ranktop.tui.screens.cluster" in modules and "ranktop.tui.screens.rank" in modules
    assert violations == {}


def test_the_contract_catches_a_screen_that_imports_a_source(tmp_path):
    assert "ranktop.tui.sources.prometheus.source" in caught(
        tmp_path, "fakescreens", SOURCES, "ranktop.tui.engine.client",
        "ranktop.tui.sources.prometheus.source")

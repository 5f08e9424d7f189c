"""Widgets import no source: they are given numbers, never where they came from."""

from __future__ import annotations

from tests.import_contract import caught, contract_violations

SOURCES = ("ranktop.tui.sources",)


def test_no_widget_imports_a_source():
    modules, violations = contract_violations("ranktop.widgets", SOURCES)
    assert "ranktop.widgets.heatmap" in modules
    assert violations == {}


def test_the_contract_catches_a_widget_that_imports_a_source(tmp_path):
    assert "ranktop.tui.sources.demo" in caught(
        tmp_path, "fakewidgets", SOURCES, "ranktop.tui.core.maps.scale", "ranktop.tui.sources.demo")

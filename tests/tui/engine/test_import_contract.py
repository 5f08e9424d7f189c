"""The engine imports no UI: no Textual, no screen, no widget, not the app."""

from __future__ import annotations

from tests.import_contract import caught, contract_violations

THE_UI = ("textual", "ranktop.tui.screens", "ranktop.widgets", "ranktop.tui.app")


def test_the_engine_imports_no_screen_widget_app_or_textual():
    modules, violations = contract_violations("ranktop.tui.engine", THE_UI)
    assert "ranktop.tui.engine.threaded" in modules and "ranktop.tui.engine.maps" in modules
    assert violations == {}


def test_the_contract_catches_an_engine_module_that_imports_a_widget(tmp_path):
    assert "ranktop.widgets.heatmap" in caught(
        tmp_path, "fakeengine", THE_UI, "ranktop.tui.core.maps.scale", "ranktop.widgets.heatmap")

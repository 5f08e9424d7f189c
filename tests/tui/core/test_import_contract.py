"""The headless core imports neither Textual nor Rich, nor any layer above it: the engine,
the screens, the widgets, the app, nor the configuration loader (``ranktop.tui.settings``)."""

from __future__ import annotations

from tests.import_contract import caught, contract_violations, planted

ABOVE_THE_CORE = ("textual", "rich", "httpx", "ranktop.tui.engine", "ranktop.tui.screens",
                  "ranktop.widgets", "ranktop.tui.app", "ranktop.tui.settings",
                  "ranktop.tui.sources", "ranktop.tui.logs", "ranktop.tui.flight",
                  "ranktop.tui.bundle", "ranktop.tui.simulator", "ranktop.tui.cli")


def test_the_core_imports_no_ui_and_no_layer_above_it():
    modules, violations = contract_violations("ranktop.tui.core", ABOVE_THE_CORE)
    assert "ranktop.tui.core.detect.detectors" in modules and "ranktop.tui.core.analysis" in modules
    assert violations == {}


def test_the_contract_catches_a_core_module_that_imports_textual(tmp_path):
    path = planted(tmp_path, "fakecore", "json", "textual.widget")
    modules, violations = contract_violations("fakecore", ABOVE_THE_CORE, path)
    assert sorted(modules) == ["fakecore.clean", "fakecore.leaky"]
    assert list(violations) == ["fakecore.leaky"]
    assert "textual" in violations["fakecore.leaky"]


def test_the_contract_catches_a_core_module_that_imports_the_engine(tmp_path):
    assert "ranktop.tui.engine.snapshot" in caught(
        tmp_path, "fakecore", ABOVE_THE_CORE, "json", "ranktop.tui.engine.snapshot")


def test_the_contract_catches_a_core_module_that_imports_the_settings(tmp_path):
    assert "ranktop.tui.settings.config" in caught(
        tmp_path, "fakecore", ABOVE_THE_CORE, "ranktop.tui.core.config_values",
        "ranktop.tui.settings.config")

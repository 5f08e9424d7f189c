"""The one stylesheet and the widgets agree: every component class a widget or screen
declares is styled in tui/app/ranktop.tcss, and the stylesheet styles no class nobody declares
(a typo on either side would leave text silently unstyled)."""

from __future__ import annotations

import re
from importlib import resources

import ranktop.tui.app.console
import ranktop.tui.app.fleet  # noqa: F401 - ... and the jobs list's
from textual.widget import Widget


def declared_component_classes() -> dict[str, str]:
    """Component class -> the ranktop class that declares it."""
    found: dict[str, str] = {}
    pending = list(Widget.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("ranktop."):
            for name in cls.__dict__.get("COMPONENT_CLASSES", ()):
                found[name] = cls.__name__
    return found


def styled_component_classes() -> set[str]:
    text = resources.files("ranktop.tui.app").joinpath("ranktop.tcss").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return set(re.findall(r"\.([a-z][a-z-]*--[a-z-]+)", text))


def test_every_declared_component_class_is_styled_and_no_other():
    declared = declared_component_classes()
    assert {"anomaly-list--critical", "log-view--watchdog", "line--alarm"} <= set(declared)
    assert set(declared) - styled_component_classes() == set()
    assert styled_component_classes() - set(declared) == set()

"""The layer table holds over the whole tree, read statically, and catches what it names."""

from __future__ import annotations

import pytest

from tests.layers import ROOMS, crossings, package_sources, room_of


def test_every_import_of_the_tree_keeps_to_the_layer_table():
    sources = package_sources()
    assert len(sources) > 200
    assert [str(crossing) for crossing in crossings(sources)] == []


def test_every_module_has_a_room():
    assert [module for module in package_sources() if room_of(module) not in ROOMS] == []


@pytest.mark.parametrize(("module", "text", "reached"), [
    # the core reading the log and dump rooms (the run-time contract named neither)
    ("ranktop.tui.core.detect.fake", "from ...logs.tail import FileLog\n", "ranktop.tui.logs.tail"),
    ("ranktop.tui.core.hang.fake", "from ...flight import pipes\n", "ranktop.tui.flight.pipes"),
    # a screen reaching a source inside a function, where importing the module never runs it
    ("ranktop.tui.screens.fake",
     "def later():\n    from ..sources import demo\n    return demo\n", "ranktop.tui.sources.demo"),
    # a source drawing
    ("ranktop.tui.sources.fake", "from textual.widget import Widget\n", "textual.widget"),
    # inside the core, an arrow running the wrong way: the floor reading a group
    ("ranktop.tui.core.fake", "from .detect.straggler import Straggler\n",
     "ranktop.tui.core.detect.straggler"),
    ("ranktop.tui.core.detect.fake", "from ..advice import action\n",
     "ranktop.tui.core.advice.action"),
    # an absolute import is judged the same
    ("ranktop.widgets.fake", "import ranktop.tui.engine.snapshot\n", "ranktop.tui.engine.snapshot"),
    ("ranktop.tui.core.maps.fake", "if True:\n    import httpx\n", "httpx"),
])
def test_a_planted_crossing_is_caught(module, text, reached):
    sources = package_sources()
    sources[module] = (text, False)
    found = crossings(sources)
    assert [(c.module, c.imported) for c in found] == [(module, reached)]
    assert found[0].line >= 1 and found[0].why


def test_an_allowed_import_is_not_a_crossing():
    sources = package_sources()
    sources["ranktop.tui.core.advice.fake"] = (
        "from ..detect.straggler import x\nfrom ..hang import triage\nfrom ..model import Frame\n",
        False)
    assert crossings(sources) == []

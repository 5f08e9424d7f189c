"""The keys a user may set: derived from the screens' bindings, listed in default.toml, and a
keymap refused when it names no binding, no key, or leaves two actions on one key."""

from __future__ import annotations

import re

import pytest
from ranktop.tui.app.keymap import (
    _merged,
    binding_ids,
    check_keymap,
    declared,
    layers,
    screen_classes,
    screen_name,
)
from ranktop.tui.screens.cluster import ClusterScreen
from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.jump import JumpScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.paths import shipped_config_dir
from ranktop.tui.settings.reader import ConfigError
from ranktop.widgets.log_view import LogView


def listed_in_default_toml() -> dict[str, str]:
    """The ``# "id" = "keys"`` lines of default.toml's [keys] table."""
    text = (shipped_config_dir() / "default.toml").read_text()
    section = text.split("\n[keys]\n", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^# "([^"]+)" = "([^"]*)"$', section, re.MULTILINE))


def test_every_screen_the_console_shows_is_walked():
    assert {ClusterScreen, RankScreen, JumpScreen, HelpScreen, EvidenceScreen} <= set(
        screen_classes())


def test_the_ids_come_from_every_screen_the_app_and_the_rank_screens_log():
    ids = binding_ids()
    for cls in (ClusterScreen, RankScreen, JumpScreen, HelpScreen, EvidenceScreen, LogView):
        assert {b.id for b in cls.BINDINGS if b.id} <= ids, cls.__name__
    assert {"rank.back", "log.follow", "app.pause", "app.quit", "cluster.quit"} <= ids


def test_default_toml_lists_exactly_the_derived_ids_with_their_default_keys():
    listed = listed_in_default_toml()
    assert listed == {binding_id: b.key for binding_id, b in declared().items()}


def test_the_default_keys_do_not_clash():
    check_keymap({}, "defaults")


@pytest.mark.parametrize("keymap", [
    {"rank.back": "backspace"},
    {"app.pause": "space"},
    {"app.pause": "?", "app.help": "p"},  # a swap frees each key for the other
    {"cursor.jump": "slash,f"},
    {"rank.next_anomaly": "ctrl+n"},
    {"map.1": "1,f1"},
])
def test_a_keymap_without_clashes_is_accepted(keymap):
    check_keymap(keymap, "my.toml")


@pytest.mark.parametrize("keymap,words", [
    ({"app.nonsense": "x"}, ["my.toml: keys: unknown binding id 'app.nonsense'", "rank.back"]),
    ({"rank.back": "bakspace"}, ["'rank.back': 'bakspace' is not a key"]),
    ({"app.pause": "hyperdrive+p"}, ["'hyperdrive+p' is not a key"]),
    ({"app.pause": "a,,b"}, ["'app.pause': empty key"]),
    # two of the screen's own
    ({"app.pause": "z"}, ["'app.pause'", "'map.zoom'", "'z' on the cluster screen"]),
    # two of the screen's: zoom would take quit's key
    ({"map.zoom": "q"}, ["'map.zoom'", "'cluster.quit'", "'q' on the cluster screen"]),
    # the screen's and the app's: the screen's would win, help would never run there
    ({"map.zoom": "?"}, ["'map.zoom'", "'app.help'", "on the cluster screen"]),
    # the app's priority key over the command palette's, Textual's own priority key
    ({"app.quit": "ctrl+p"}, ["'app.quit'", "Textual's 'command_palette'"]),
    # the focused log's and the screen's
    ({"rank.next": "f"}, ["'rank.next'", "'log.follow'", "'f' on the rank screen"]),
    # the jump prompt's text field keeps its editing keys
    ({"jump.cancel": "enter"}, ["'jump.cancel'", "Textual's 'submit'", "jump screen"]),
    # one key in its two spellings
    ({"app.pause": "?"}, ["'app.pause'", "'app.help'", "'question_mark'"]),
])
def test_a_bad_keymap_is_refused_with_a_message_that_names_what_is_wrong(keymap, words):
    with pytest.raises(ConfigError) as caught:
        check_keymap(keymap, "my.toml")
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_keys_of_different_screens_may_be_the_same():
    check_keymap({"rank.search": "z", "jump.cancel": "ctrl+z"}, "my.toml")  # z: zoom elsewhere


async def test_every_widget_with_configurable_keys_is_declared_by_its_screen():
    from tests.tui.conftest import make_app

    def undeclared(screen) -> set[str]:
        keyed = {type(w) for w in screen.walk_children()
                 if any(getattr(b, "id", None) for b in type(w).BINDINGS)}
        return {cls.__name__ for cls in keyed - set(getattr(screen, "KEY_WIDGETS", ()))}

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        assert undeclared(app.screen) == set()
        await pilot.press("enter")
        assert isinstance(app.screen, RankScreen)
        assert undeclared(app.screen) == set()  # the log view's keys: declared
        await pilot.press("escape", "slash")
        assert isinstance(app.screen, JumpScreen)
        assert undeclared(app.screen) == set()


# What each key of the common grammar may do on a screen that binds it, by its binding's
# description: the same kind of thing everywhere (as in less and k9s).
GRAMMAR = {
    "j": {"Down", "Next"},
    "k": {"Up", "Previous"},
    "g": {"Top", "First", "First rank"},
    "G": {"Bottom", "Last", "Last rank"},
    "slash": {"Search"},
    "n": {"Anomaly", "Next match"},
    "N": {"Previous anomaly", "Prev anomaly", "Previous match"},
    "question_mark": {"Help", "Close"},  # on the help screen, ? closes it
    "q": {"Quit", "Back", "Close", "Cancel"},  # leaves the screen (the cluster: ranktop)
    "escape": {"Back", "Close", "Cancel"},
}
YES_NO = {"confirmdumps"}  # a yes / no question: n is no


def test_the_common_keys_mean_the_same_on_every_screen():
    wrong = []
    for screen in screen_classes():
        seen: set[str] = set()
        for cls in layers(screen):
            for binding in _merged(cls):
                for key in binding.key.split(","):
                    if key not in GRAMMAR or key in seen:
                        continue
                    seen.add(key)  # the first layer to bind a key answers it
                    if (binding.description not in GRAMMAR[key]
                            and not (key == "n" and screen_name(screen) in YES_NO)):
                        wrong.append((screen_name(screen), key, binding.description))
    assert wrong == []


def test_help_and_search_are_on_every_full_screen():
    for screen in (ClusterScreen, RankScreen, EvidenceScreen):
        keys = {key for cls in layers(screen) for b in _merged(cls) for key in b.key.split(",")}
        assert {"slash", "question_mark", "j", "k", "g", "G", "n", "N"} <= keys, screen

"""Which keys the console has, screen by screen, and the check of a user's ``[keys]``.

Nothing here is a list kept by hand: the binding ids come from the BINDINGS of the app, of
every screen class and of the widgets a screen names in its ``KEY_WIDGETS``, so a binding is
configurable (and checked) as soon as it is declared. A keymap is refused when it names an
unknown id or a key Textual does not know, or when it leaves two actions on one key of one
screen, where one of them would silently never run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from textual.binding import Binding, InvalidBinding
from textual.dom import DOMNode
from textual.keys import REPLACED_KEYS, Keys, key_to_character
from textual.screen import ModalScreen, Screen

from ..settings.reader import ConfigError
from . import fleet  # noqa: F401 - the jobs list's screens
from .console import RanktopApp  # importing the app imports every screen

MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
NAMED_KEYS = frozenset(key.value for key in Keys)


@dataclass(frozen=True)
class KeyUse:
    """One key of one binding as one screen sees it."""

    key: str  # Textual's name of the key: "p", "question_mark", "ctrl+p"
    binding_id: str | None  # None: one of Textual's own bindings, which no keymap can move
    action: str
    priority: bool = False  # answered before any screen or widget sees the key

    @property
    def name(self) -> str:
        return repr(self.binding_id) if self.binding_id else f"Textual's {self.action!r}"


def screen_classes() -> list[type[Screen]]:
    """Every screen ranktop defines, found by walking Screen's subclasses."""
    found: list[type[Screen]] = []
    pending = list(Screen.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("ranktop."):
            found.append(cls)
    return sorted(found, key=screen_name)


def screen_name(screen: type[Screen]) -> str:
    """``ClusterScreen`` -> "cluster"."""
    return screen.__name__.removesuffix("Screen").lower()


def layers(screen: type[Screen]) -> list[type[DOMNode]]:
    """The classes whose bindings are live on ``screen``, in the order Textual asks them:
    its widgets, itself, then the app (only the app's priority keys above a modal screen)."""
    return [*getattr(screen, "KEY_WIDGETS", ()), screen, RanktopApp]


def declared() -> dict[str, Binding]:
    """Every configurable binding by its id, as declared (keys as written there)."""
    found: dict[str, Binding] = {}
    for screen in screen_classes():
        for cls in layers(screen):
            for base in cls.__mro__:
                for binding in base.__dict__.get("BINDINGS", ()):
                    if isinstance(binding, Binding) and binding.id:
                        found.setdefault(binding.id, binding)
    return found


def binding_ids() -> set[str]:
    """Every binding id a user's ``[keys]`` may name."""
    return set(declared())


def check_keymap(keymap: Mapping[str, str], origin: str) -> None:
    """Raise ConfigError, naming ``origin`` (the file), for the first problem of ``keymap``."""
    known = binding_ids()
    wanted: dict[str, list[str]] = {}
    for binding_id, keys in keymap.items():
        if binding_id not in known:
            raise ConfigError(f"{origin}: keys: unknown binding id {binding_id!r} "
                              f"(known: {', '.join(sorted(known))})")
        wanted[binding_id] = _keys(keys, binding_id, origin)
    for screen in screen_classes():
        clash = _first_clash(_uses(screen, wanted))
        if clash is not None:
            one, other = clash
            raise ConfigError(f"{origin}: keys: {one.name} and {other.name} are both bound to "
                              f"{one.key!r} on the {screen_name(screen)} screen")


def _keys(keys: str, binding_id: str, origin: str) -> list[str]:
    """The user's keys for ``binding_id`` in Textual's names, each checked to be a key."""
    try:
        names = [b.key for b in Binding.make_bindings([Binding(keys, "")])]
    except InvalidBinding:
        raise ConfigError(f"{origin}: keys: {binding_id!r}: empty key in {keys!r}") from None
    for name in names:
        if not is_key(name):
            raise ConfigError(f"{origin}: keys: {binding_id!r}: {name!r} is not a key "
                              "(keys look like p, P, space, enter, escape, backspace, tab, "
                              "up, pageup, f5, ctrl+x)")
    return names


def is_key(name: str) -> bool:
    """Whether Textual can ever report ``name``: a character or a named key, with modifiers."""
    *modifiers, key = name.split("+")
    if not key or not set(modifiers) <= MODIFIERS:
        return False
    return key in NAMED_KEYS or key_to_character(REPLACED_KEYS.get(key, key)) is not None


def _uses(screen: type[Screen], wanted: Mapping[str, Sequence[str]]) -> Iterator[KeyUse]:
    """Every key live on ``screen`` once the user's keys replace the declared ones."""
    modal = issubclass(screen, ModalScreen)
    for cls in layers(screen):
        above_modal = modal and cls is RanktopApp
        for binding in _merged(cls):
            if above_modal and not binding.priority:
                continue
            keys = wanted.get(binding.id or "", [binding.key])
            for key in keys:
                yield KeyUse(key, binding.id, binding.action, binding.priority)


def _merged(cls: type[DOMNode]) -> list[Binding]:
    """The bindings an instance of ``cls`` starts with (its own over its bases'), one per key;
    the app's command palette key is added to it at run time."""
    bindings = [b for bs in cls._merged_bindings.key_to_bindings.values() for b in bs]
    if issubclass(cls, RanktopApp) and cls.ENABLE_COMMAND_PALETTE:
        bindings.append(Binding(cls.COMMAND_PALETTE_BINDING, "command_palette", priority=True))
    return bindings


def _first_clash(uses: Iterator[KeyUse]) -> tuple[KeyUse, KeyUse] | None:
    """Two different actions on one key, one of them configurable. Textual's own bindings
    share some keys on purpose (ctrl+c copies in a text field and warns in the app), and one
    of ranktop's priority keys may take a key from them (ctrl+c quits everywhere)."""
    by_key: dict[str, list[KeyUse]] = {}
    for use in uses:
        for earlier in by_key.setdefault(use.key, []):
            if _clash(earlier, use):
                return earlier, use
        by_key[use.key].append(use)
    return None


def _clash(one: KeyUse, other: KeyUse) -> bool:
    if (one.binding_id, one.action) == (other.binding_id, other.action):
        return False
    if not (one.binding_id or other.binding_id):
        return False  # Textual's own, among themselves
    ours, theirs = (one, other) if one.binding_id else (other, one)
    return not (ours.priority and not theirs.priority and theirs.binding_id is None)

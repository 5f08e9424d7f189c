"""The keys that hints on screen name: "PAUSED: p to resume", "n / N to visit", "Esc, e or q
closes this screen". Each asks here for the key bound to a binding id now, the user's keymap
(``[keys]``) before the key the binding was declared with, so a rebound key shows in every
hint as it does in the footer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode


def keymap_of(app: App) -> Mapping[str, str]:
    """The user's keys by binding id (empty for an app without ranktop's settings)."""
    settings = getattr(app, "settings", None)
    return getattr(settings, "keymap", None) or {}


def bound_keys(app: App, binding: Binding) -> list[str]:
    """Every key ``binding`` answers to, as the footer writes keys ("esc", "?", "space")."""
    keys = keymap_of(app).get(binding.id or "", binding.key)
    return [app.get_key_display(Binding(key.strip(), binding.action))
            for key in keys.split(",") if key.strip()]


def keys_for(node: DOMNode, binding_id: str) -> list[str]:
    """The keys of the binding ``binding_id`` declared by ``node``'s class or by the app."""
    for owner in (type(node), type(node.app)):
        for cls in owner.__mro__:
            for binding in cls.__dict__.get("BINDINGS", ()):
                if isinstance(binding, Binding) and binding.id == binding_id:
                    return bound_keys(node.app, binding)
    raise LookupError(f"no binding {binding_id!r} on {type(node).__name__} or the app")


def key_for(node: DOMNode, binding_id: str) -> str:
    """The first key of ``binding_id``: the one a hint names."""
    return keys_for(node, binding_id)[0]


def any_of(keys: Sequence[str]) -> str:
    """``esc, ? or q``."""
    if len(keys) < 2:
        return "".join(keys)
    return f"{', '.join(keys[:-1])} or {keys[-1]}"


def sentence(text: str) -> str:
    """``text`` with a capital first letter when it starts with a key's name ("Esc closes"),
    never when it starts with a one-character key ("q closes", where Q would be another key)."""
    first = text.split(" ", 1)[0].rstrip(",")
    return text[:1].upper() + text[1:] if len(first) > 1 and first.isalpha() else text

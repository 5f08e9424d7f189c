"""What to do: every action of the current analysis, its rule and its commands, one selected;
a drain says who else is on its node.

The screen shows what the analysis advised; it runs nothing. A key copies the selected
action's command to the clipboard through the terminal (OSC 52), and only when pressed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...widgets.key_footer import KeyFooter
from ..core.advice.advise import Action
from ..core.advice.drain_commands import NO_COMMAND
from ..core.text import plain
from .hints import any_of, key_for, keys_for, sentence
from .line_styles import CLASSES, Styles, styles_of

NONE_YET = "No advice: no confirmed incident asks for an action."


def advice_text(actions: Sequence[Action], selected: int, style: Styles) -> Group:
    """Each action, the selected one marked, with its rule and the commands to copy."""
    if not actions:
        return Group(Text(NONE_YET, style("quiet")))
    parts: list[Text] = []
    for index, action in enumerate(actions):
        mark = "▶ " if index == selected else "  "
        parts.append(Text(mark + plain(action.text, 1000), style("strong")))
        parts.append(Text(f"    rule: {plain(action.rule, 1000)}", style("muted")))
        if action.also:
            parts.append(Text(f"    {plain(action.also, 1000)}"))
        if action.cost is not None and action.cost.read_from:
            parts.append(Text(f"    {plain(action.cost.read_from, 1000)}", style("muted")))
        parts += [Text(f"    $ {plain(command, 1000)}") for command in action.commands]
        if action.hardware and not action.commands:
            parts.append(Text(f"    {NO_COMMAND}", style("muted")))
    return Group(*parts)


class AdviceScreen(ModalScreen[None]):
    """The actions of the analysis shown when it opened."""

    BINDING_GROUP_TITLE = "What to do"
    BINDINGS = [
        Binding("escape,a,q", "close", "Close", id="advice.close"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="advice.help",
                tooltip="Show every key of this screen"),
        Binding("down,j", "select(1)", "Next", show=False, id="advice.next",
                tooltip="Select the next action"),
        Binding("up,k", "select(-1)", "Previous", show=False, id="advice.previous",
                tooltip="Select the previous action"),
        Binding("y", "copy", "Copy command", id="advice.copy",
                tooltip="Copy the selected action's command to the clipboard (through the "
                        "terminal); ranktop never runs it"),
    ]
    COMPONENT_CLASSES = CLASSES

    def __init__(self, actions: Sequence[Action]) -> None:
        super().__init__()
        self.actions = tuple(actions)
        self.selected = 0

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="advice-box"):
            yield Static(id="advice-text", markup=False)
            closes = any_of(keys_for(self, "advice.close"))
            copies = key_for(self, "advice.copy")
            yield Static(sentence(f"{copies} copies the selected command, {closes} closes "
                                  "this screen. Nothing here is run by ranktop."),
                         id="help-footer")
        yield KeyFooter(first=("app.help", "close"))

    def on_mount(self) -> None:
        self.query_one("#advice-box").border_title = "what to do"
        self._draw()

    def _draw(self) -> None:
        text = advice_text(self.actions, self.selected, styles_of(self))
        self.query_one("#advice-text", Static).update(text)

    def action_select(self, step: int) -> None:
        if self.actions:
            self.selected = (self.selected + step) % len(self.actions)
            self._draw()

    def action_copy(self) -> None:
        if not self.actions:
            self.app.notify(NONE_YET, timeout=4)
            return
        action = self.actions[self.selected]
        if not action.commands:
            self.app.notify(f"Nothing to copy: {action.short} has no command.", timeout=4,
                            markup=False)
            return
        self.app.copy_to_clipboard("\n".join(action.commands))
        self.app.notify(f"Copied to the clipboard: {plain(action.commands[0], 200)}",
                        timeout=4, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)

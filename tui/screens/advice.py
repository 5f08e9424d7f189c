"""What to do: every action of the current analysis, its rule and its commands, one selected;
a drain says who else is on its node.

The screen shows what the analysis advised; it runs nothing. The selection steps through
each command of each action (an action without a command is one stop), so that any one of
them can be copied: a key copies the selected command to the clipboard through the terminal
(OSC 52), and only when pressed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from ...widgets.key_footer import KeyFooter
from ..core.advice.advise import Action
from ..core.advice.drain_commands import NO_COMMAND
from ..core.text import plain
from .hints import any_of, key_for, keys_for, sentence
from .line_styles import CLASSES, Styles, styles_of

NONE_YET = "No advice: no confirmed incident asks for an action."
NO_LIST = ("The jobs list is where ranktop opens with no --job, against a backend that holds "
           "several jobs: {job} has its row there.")


class OtherJob(Message):
    """Show the row of the first of ``names`` the jobs list holds (the app of a fleet)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__()
        self.names = names


Stop = tuple[int, int | None]  # (action, command of it; None: an action with none)


def stops(actions: Sequence[Action]) -> list[Stop]:
    """Where the selection can stand: each command of each action, in order."""
    return [(index, command) for index, action in enumerate(actions)
            for command in (range(len(action.commands)) or [None])]


def advice_text(actions: Sequence[Action], selected: Stop, style: Styles) -> Group:
    """Each action, the selected one marked, with its rule and the commands to copy, the
    selected command marked."""
    if not actions:
        return Group(Text(NONE_YET, style("quiet")))
    parts: list[Text] = []
    for index, action in enumerate(actions):
        mark = "▶ " if index == selected[0] else "  "
        parts.append(Text(mark + plain(action.text, 1000), style("strong")))
        parts.append(Text(f"    rule: {plain(action.rule, 1000)}", style("muted")))
        if action.also:
            parts.append(Text(f"    {plain(action.also, 1000)}"))
        if action.cost is not None and action.cost.read_from:
            parts.append(Text(f"    {plain(action.cost.read_from, 1000)}", style("muted")))
        parts += [Text(f"  ▸ $ {plain(command, 1000)}", style("strong"))
                  if (index, number) == selected else Text(f"    $ {plain(command, 1000)}")
                  for number, command in enumerate(action.commands)]
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
                tooltip="Select the next command (of this action, else of the next)"),
        Binding("up,k", "select(-1)", "Previous", show=False, id="advice.previous",
                tooltip="Select the previous command"),
        Binding("home,g", "edge(0)", "First", show=False, id="advice.first",
                tooltip="Select the first action"),
        Binding("end,G", "edge(-1)", "Last", show=False, id="advice.last",
                tooltip="Select the last action"),
        Binding("y", "copy", "Copy command", id="advice.copy",
                tooltip="Copy the selected command to the clipboard (through the "
                        "terminal); ranktop never runs it"),
        Binding("enter", "other_job", "Other job", id="advice.other_job",
                tooltip="The other job on the selected drain's node: its row in the "
                        "jobs list"),
    ]
    COMPONENT_CLASSES = CLASSES

    def __init__(self, actions: Sequence[Action]) -> None:
        super().__init__()
        self.actions = tuple(actions)
        self.stops = stops(self.actions)
        self.selected = 0  # of the stops

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="advice-box"):
            yield Static(id="advice-text", markup=False)
            closes = any_of(keys_for(self, "advice.close"))
            copies = key_for(self, "advice.copy")
            steps = f"{key_for(self, 'advice.next')} / {key_for(self, 'advice.previous')}"
            other = key_for(self, "advice.other_job")
            yield Static(sentence(f"{steps} selects each command, {copies} copies it, "
                                  f"{other} shows the other job on a drain's node in the "
                                  f"jobs list, {closes} closes this screen. Nothing here "
                                  "is run by ranktop."),
                         id="help-footer")
        yield KeyFooter(first=("app.help", "close"))

    def on_mount(self) -> None:
        self.query_one("#advice-box").border_title = "what to do"
        self._draw()

    def _draw(self) -> None:
        selected = self.stops[self.selected] if self.stops else (0, None)
        text = advice_text(self.actions, selected, styles_of(self))
        self.query_one("#advice-text", Static).update(text)

    def action_select(self, step: int) -> None:
        if self.stops:
            self.selected = (self.selected + step) % len(self.stops)
            self._draw()

    def action_edge(self, end: int) -> None:
        """The first command of the first (``end`` 0) or the last (-1) action."""
        if self.stops:
            wanted = end % len(self.actions)
            self.selected = next(i for i, stop in enumerate(self.stops) if stop[0] == wanted)
            self._draw()

    def action_copy(self) -> None:
        if not self.actions:
            self.app.notify(NONE_YET, timeout=4)
            return
        index, number = self.stops[self.selected]
        action = self.actions[index]
        if number is None:
            self.app.notify(f"Nothing to copy: {action.short} has no command.", timeout=4,
                            markup=False)
            return
        command = action.commands[number]
        self.app.copy_to_clipboard(command)
        self.app.notify(f"Copied to the clipboard: {plain(command, 200)}", timeout=4,
                        markup=False)

    def action_other_job(self) -> None:
        """Another job on the selected drain's node: its row in the jobs list, where the
        console was opened from one."""
        action = self.actions[self.stops[self.selected][0]] if self.stops else None
        names = action.other_jobs if action is not None else ()
        if not names:
            self.app.notify("No other job named on this action's node.", timeout=4)
        elif getattr(self.app, "job_open", None) is None:
            self.app.notify(NO_LIST.format(job=plain(names[0], 100)), timeout=6, markup=False)
        else:
            self.app.post_message(OtherJob(names))

    def action_close(self) -> None:
        self.dismiss(None)

"""What `ranktop report` says of the advice in text: the actions of the last analysis, each
with its rule, evidence, who else a drain stops, and command (to copy: ranktop runs none of
them). In JSON they are the document's "actions" (``core/document.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.advice.advise import Action
from ..core.advice.drain_commands import NO_COMMAND


def actions_lines(actions: Sequence[Action]) -> list[str]:
    """The report's "what to do" section: each action, its rule, who else a drain stops,
    its commands."""
    if not actions:
        return []
    lines = ["", "what to do (advice: ranktop runs nothing):"]
    for action in actions:
        lines += [f"  {action.text}", f"    rule: {action.rule}"]
        if action.also:
            lines.append(f"    {action.also}")
        if action.cost is not None and action.cost.read_from:
            lines.append(f"    {action.cost.read_from}")
        lines += [f"    $ {command}" for command in action.commands]
        if action.hardware and not action.commands:
            lines.append(f"    {NO_COMMAND}")
    return lines

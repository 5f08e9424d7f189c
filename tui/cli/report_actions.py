"""What `ranktop report` says of the advice: the actions of the last analysis, each with its
rule, evidence and command (to copy: ranktop runs none of them)."""

from __future__ import annotations

from collections.abc import Sequence

from ranktop.tui.core.advice import Action
from ranktop.tui.core.drain_commands import NO_COMMAND


def actions_json(actions: Sequence[Action]) -> list[dict]:
    """``report --json``'s "actions": kind, node, gpu, rank, rule, evidence, command."""
    return [{"kind": a.kind, "text": a.text, "node": a.node or None, "gpu": a.gpu,
             "rank": a.rank, "rule": a.rule, "evidence": a.evidence,
             "command": "\n".join(a.commands) or None}
            for a in actions]


def actions_lines(actions: Sequence[Action]) -> list[str]:
    """The report's "what to do" section: each action, its rule, its commands."""
    if not actions:
        return []
    lines = ["", "what to do (advice: ranktop runs nothing):"]
    for action in actions:
        lines += [f"  {action.text}", f"    rule: {action.rule}"]
        lines += [f"    $ {command}" for command in action.commands]
        if action.hardware and not action.commands:
            lines.append(f"    {NO_COMMAND}")
    return lines

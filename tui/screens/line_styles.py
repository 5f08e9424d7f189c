"""How the screens' text lines look: each span of a header, status line or title has a role
("alarm", "muted", ...), each role is a component class ``line--<role>`` that the screens
declare and tui/app/ranktop.tcss styles. The line builders (cluster_lines, rank_lines) say what a
span is; the stylesheet says how it looks.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from textual.widget import Widget

ROLES = (
    "strong",  # what a line is about: "ranks 512/512 up", a rank's place
    "muted",  # context: the data's age, the source, metric names
    "alarm",  # a breach, missing ranks, no progress
    "warn",  # data getting old
    "job",  # the job's name
    "paused",  # the PAUSED badge
    "moment",  # the badge of a past moment shown: "AT 03:12:40 · 14 min ago · …"
    "rank",  # the "rank 37" badge
    "local",  # "(NVML, this node)"
    "no-data",  # "no data from this rank"
    "ok", "slow", "stale", "error",  # the source's health (Health values)
    "critical", "major", "warning",  # an anomaly's severity
    "quiet",  # "no active anomaly"
    "hang",  # the hang verdict, and the ranks the others wait for
    "quoted",  # a log line quoted as evidence
    "key",  # a key in the help screen
)
CLASSES = frozenset(f"line--{role}" for role in ROLES)

Styles = Callable[[str], Style]
"""The style of a role ("" for plain text)."""


def styles_of(widget: Widget) -> Styles:
    """The role styles as ``widget`` (a screen that declares CLASSES) resolves them."""
    def style(role: str) -> Style:
        if not role:
            return Style()
        return widget.get_component_rich_style(f"line--{role}", partial=True)
    return style

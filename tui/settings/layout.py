"""``[layout]``: how the maps arrange the ranks, by node (the default) or by the job's
parallelism (pipeline stages as rows, data-parallel replicas as columns)."""

from __future__ import annotations

from ..core.config_values import LayoutSettings
from ..core.parallelism import DEFAULT_ORDER, parse
from .reader import Reader

VIEWS = ("node", "parallelism")


def layout_settings(reader: Reader) -> LayoutSettings:
    """Read ``[layout]``; a bad value is a ConfigError naming the key and why."""
    text = reader.optional_text("parallelism")
    order = reader.optional_text("order") or DEFAULT_ORDER
    try:
        parallelism = parse(text, order)
    except ValueError as error:
        key = "order" if str(error).startswith("order") else "parallelism"
        raise reader.fail(key, str(error)) from None
    view = reader.optional_text("view") or "node"
    if view not in VIEWS:
        raise reader.fail("view", f'must be "node" or "parallelism" (got {view!r})')
    if view == "parallelism" and parallelism is None:
        raise reader.fail("view", 'is "parallelism" but parallelism is not given '
                                  '(e.g. parallelism = "tp=8,pp=4,dp=16")')
    return LayoutSettings(parallelism, view)

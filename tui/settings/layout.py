"""``[layout]``: how the maps arrange the ranks, by node (the default) or by the job's
parallelism (pipeline stages as rows, data-parallel replicas as columns)."""

from __future__ import annotations

from dataclasses import replace

from ..core.config_values import LayoutSettings
from ..core.parallelism import DEFAULT_ORDER, Parallelism, parse
from .reader import Reader

VIEWS = ("node", "parallelism")


def layout_settings(reader: Reader) -> LayoutSettings:
    """Read ``[layout]``; a bad value is a ConfigError naming the key and why."""
    parallelism = parallelism_of(reader)
    view = reader.optional_text("view") or "node"
    if view not in VIEWS:
        raise reader.fail("view", f'must be "node" or "parallelism" (got {view!r})')
    if view == "parallelism" and parallelism is None:
        raise reader.fail("view", 'is "parallelism" but parallelism is not given '
                                  '(e.g. parallelism = "tp=8,pp=4,dp=16")')
    return LayoutSettings(parallelism, view)


def parallelism_of(reader: Reader) -> Parallelism | None:
    """The table's ``parallelism`` in its ``order`` (None: not given); a bad one is a
    ConfigError naming the key and why."""
    text = reader.optional_text("parallelism")
    order = reader.optional_text("order") or DEFAULT_ORDER
    try:
        return parse(text, order)
    except ValueError as error:
        key = "order" if str(error).startswith("order") else "parallelism"
        raise reader.fail(key, str(error)) from None


def with_job_parallelism(layout: LayoutSettings, parallelism: Parallelism | None
                         ) -> LayoutSettings:
    """``layout`` with ``parallelism`` (the demo job's, known from ``[demo]``), unless
    ``layout`` gives one of its own."""
    if layout.parallelism is not None or parallelism is None:
        return layout
    return replace(layout, parallelism=parallelism)

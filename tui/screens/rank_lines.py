"""The text lines of the rank screen: who the rank is, what is wrong with it, other values."""

from __future__ import annotations

from collections.abc import Sequence

from ranktop.tui.core.detect import Anomaly
from ranktop.tui.core.hang import HangVerdict
from ranktop.tui.core.metrics import format_value, summarise
from ranktop.tui.core.model import Frame, Rank, RankMap
from ranktop.tui.settings.config import Settings
from rich.text import Text

SEVERITY_STYLES = {"critical": "bold red", "major": "bold color(208)", "warning": "color(178)"}


def title(rank: Rank, rank_map: RankMap, anomalies: Sequence[Anomaly], hang: str,
          model: str = "") -> Text:
    """``rank 37  gpu-node-004  GPU 5  GPU-1a2b…`` then this rank's anomalies, one a line."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" rank {rank.rank} ", "bold reverse")
    text.append(f" {rank.place}", "bold")
    if model:
        text.append(f"  {model}")
    if rank.uuid:
        text.append(f"  {rank.uuid}", "dim")
    text.append(f"  ({len(rank_map)} ranks, from {rank_map.source})", "dim")
    for anomaly in anomalies:
        text.append("\n")
        text.append(f" ● {anomaly.severity} ", SEVERITY_STYLES.get(anomaly.severity, ""))
        text.append(f"{anomaly.kind.replace('_', ' ')}: {anomaly.summary}")
    if not anomalies:
        text.append("\n ✓ no active anomaly on this rank", "color(35)")
    if hang and not any(a.kind == "hang" for a in anomalies):  # said once is enough
        text.append("\n")
        text.append(f" {hang}", "bold color(201)")
    return text


def other_values(frame: Frame | None, rank: int, settings: Settings,
                 metrics: Sequence[str]) -> Text:
    """The rest of the rank's values, each next to the job's median."""
    text = Text(overflow="fold")
    if frame is None:
        return text
    for metric_id in metrics:
        metric = settings.metrics.get(metric_id)
        if metric is None or metric_id not in frame.values:
            continue
        summary = summarise(frame.values[metric_id])
        text.append(f" {metric.short} ", "dim")
        text.append(format_value(metric, frame.value(metric_id, rank)), "bold")
        if summary is not None and metric.unit not in ("flags", "code"):
            text.append(f" (median {format_value(metric, summary[1])})", "dim")
    return text


def hang_note(verdict: HangVerdict | None, rank: int) -> str:
    """What the latest hang triage says about this rank, if anything."""
    if verdict is None:
        return ""
    if rank in verdict.behind:
        return f"hang: the others are waiting for this rank. {verdict.summary}"
    return f"hang: {verdict.summary}"

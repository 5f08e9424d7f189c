"""The text lines of the rank screen: who the rank is, what is wrong with it, other values."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.text import Text

from ..core.analysis import Summary
from ..core.detect.detectors import Anomaly
from ..core.detect.down import DownRank
from ..core.hang.triage import HangVerdict
from ..core.metrics import format_value
from ..core.model import Frame, Rank, RankMap
from ..core.moment import shown
from ..settings.config import Settings
from .line_styles import Styles


def title(rank: Rank, rank_map: RankMap, anomalies: Sequence[Anomaly], hang: str,
          style: Styles, model: str = "", hardware: Sequence[str] = (),
          judged: bool = True) -> Text:
    """``rank 37  gpu-node-004  GPU 5  GPU-1a2b…`` then this rank's anomalies, one a line
    that wraps (every word of it shown), pending ones with how long they have held, then
    its hardware-error ledger (less what an anomaly says already). ``judged``: the source
    has answered (no all-clear before)."""
    text = Text(overflow="fold")
    text.append(f" rank {rank.rank} ", style("rank"))
    text.append(f" {rank.place}", style("strong"))
    if model:
        text.append(f"  {model}")
    if rank.uuid:
        text.append(f"  {rank.uuid}", style("muted"))
    text.append(f"  ({len(rank_map)} ranks, from {rank_map.source})", style("muted"))
    for anomaly in anomalies:
        text.append("\n")
        if anomaly.pending:
            text.append(" ◌ pending ", style("muted"))
        else:
            text.append(f" ● {anomaly.severity} ", style(anomaly.severity))
        text.append(f"{anomaly.name}: {anomaly.summary}")
        if anomaly.pending or anomaly.rule:
            text.append(f"  ({anomaly.state})", style("muted"))
    if not judged:
        text.append("\n no answer from the source yet: nothing judged", style("muted"))
    elif not anomalies:
        text.append("\n ✓ no active anomaly on this rank", style("quiet"))
    if hang and not any(a.kind == "hang" for a in anomalies):  # said once is enough
        text.append("\n")
        text.append(f" {hang}", style("hang"))
    said = " ".join(anomaly.summary for anomaly in anomalies)
    for line in hardware:
        if line in said:
            continue
        text.append("\n")
        text.append(" hardware ", style("muted"))
        text.append(line)
    return text


def other_values(frame: Frame | None, rank: int, settings: Settings,
                 metrics: Sequence[str], style: Styles,
                 summaries: Mapping[str, Summary | None], down: DownRank | None = None
                 ) -> Text:
    """The rest of the rank's values, each next to the job's median; for a rank that is
    down, the values it had when last seen."""
    text = Text(overflow="fold")
    if frame is None:
        return text
    if down is not None:
        text.append(f" down since {shown(down.since)}; "
                    f"last seen {shown(down.last_seen)}:", style("alarm"))
    for metric_id in metrics:
        metric = settings.metrics.get(metric_id)
        if metric is None or metric_id not in frame.values:
            continue
        summary = summaries.get(metric_id)
        value = (down.last_values.get(metric_id, float("nan")) if down is not None
                 else frame.value(metric_id, rank))
        text.append(f" {metric.short} ", style("muted"))
        text.append(format_value(metric, value), style("strong"))
        if summary is not None and metric.unit not in ("flags", "code"):
            text.append(f" (median {format_value(metric, summary[1])})", style("muted"))
    return text


def hang_note(verdict: HangVerdict | None, rank: int) -> str:
    """What the latest hang triage says about this rank, if anything."""
    if verdict is None:
        return ""
    if rank in verdict.behind:
        return f"hang: the others are waiting for this rank. {verdict.summary}"
    return f"hang: {verdict.summary}"


def log_title(following: bool, serious_only: bool, search: str, matches: int,
              current: int | None, note: str, log_key: Callable[[str], str],
              screen_key: Callable[[str], str], style: Styles) -> Text:
    """``log · following · warnings and errors only · /nccl: match 2 of 14 (n / N) ·
    gpu-node-004: /logs/.../stderr.log``: the modes first, the files last (they may wrap).
    ``log_key`` and ``screen_key`` name the key of a binding id, as rebound."""
    text = Text(overflow="fold")
    text.append("log", style("strong"))
    if following:
        text.append(" · following the end")
    else:
        text.append(f" · not following ({log_key('log.follow')} follows)", style("warn"))
    if serious_only:
        text.append(f" · warnings and errors only ({log_key('log.warnings')}: every line)",
                    style("warn"))
    if search:
        where = (f"match {current + 1} of {matches}" if current is not None
                 else f"{matches} matching lines")
        keys = f"{screen_key('rank.next_anomaly')} / {screen_key('rank.previous_anomaly')}"
        text.append(" · ")
        text.append(f"/{search}", style("strong"))
        text.append(f": {where} ({keys} to step)" if matches else ": no match")
    if note:
        text.append(f" · {note}", style("muted"))
    return text


def moment_mark(moment: float, end_key: str) -> str:
    """The line between a rank's log lines written by the moment shown and those after."""
    return (f"── {shown(moment)}: the moment shown · the lines below came after · "
            f"{end_key} for the end ──")

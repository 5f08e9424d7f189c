"""The text lines of the cluster screen: the job header and the selected rank's values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text

from ..core.advice.incidents import Incident
from ..core.analysis import Analysis
from ..core.config_values import MetricDef
from ..core.detect.goodput import Goodput, share_text
from ..core.detect.lateness import late_after, no_progress_after, old_data_after
from ..core.detect.restarts import KIND as RESTART
from ..core.domain import SEVERITIES
from ..core.metrics import format_value
from ..core.model import Frame, Health, Rank, SourceStatus, is_missing
from ..core.moment import JobEnd
from .line_styles import Styles
from .moment_badge import moment_badge, replaying_badge

CHECK_CONFIG = "check-config"  # named in a source's detail where the config could do better
RULES = "ranktop rules"  # named in a source's detail where recording rules would speed polls
# The commands a source's detail may name, pointed at on line 2 (why: in the help screen).
POINTED_AT = (CHECK_CONFIG, RULES)
ALARM_MARK = "▲"  # before what needs acting on: read without colour too
NOT_ANSWERED_MARK = "◇"  # before ranks a partial answer left out: not known, not down
# Most telling first: a narrow pane cuts the status line from the end.
STATUS_ORDER = (
    "sm_active", "temperature", "nvlink", "step_time", "compute_time", "throttle_reasons",
    "xid", "ecc_dbe", "sm_clock", "power", "gpu_util", "memory_used",
)


@dataclass(frozen=True)
class JobView:
    """Everything the header says, gathered by the screen."""

    job_name: str
    status: SourceStatus
    frame: Frame | None
    n_ranks: int
    ranks_up: int
    now: float
    paused: bool
    pause_key: str  # the key that resumes, as the footer shows it
    step_stuck_since: float | None
    step_seconds: float = float("nan")  # the job's median step time
    incidents: Sequence[Incident] = ()  # the anomaly panel's rows, restarts on record last
    polling_since: float | None = None  # when the poll in flight began
    refresh_seconds: float = 2.0
    moment: float | None = None  # the past moment shown (None: the live job)
    replaying: float | None = None  # a moment being replayed, not shown yet
    live_key: str = "L"  # the key back to the live job
    bundle: float | None = None  # the moment of the bundle reopened (None: none is)
    goodput: Goodput | None = None  # the job's, over the last hour
    ended: JobEnd | None = None  # the job's series ended (None: the job answers)
    earlier_key: str = "@"  # the key that asks for a past moment
    waiting_since: float | None = None  # when the console began waiting for its first answer

    @property
    def late_for(self) -> float:
        """How long the poll in flight has run, once it is overdue (0: none is)."""
        if self.polling_since is None:
            return 0.0
        waited = self.now - self.polling_since
        return waited if waited > late_after(self.refresh_seconds,
                                             self.status.poll_seconds) else 0.0

    @property
    def old_data_after(self) -> float:
        """How old the data may be before the header calls it old."""
        return old_data_after(self.refresh_seconds, self.status.sample_interval)

    @property
    def no_progress_after(self) -> float:
        status = self.status
        return no_progress_after(self.refresh_seconds, status.poll_seconds,
                                 status.sample_interval)


def header(view: JobView, style: Styles) -> Text:
    """Two lines: the job and how fresh its data is; the ranks and the job's progress.
    Before the first answer, that it is waiting, and for how long: no health, no count.
    The source's detail (where the ranks came from, …) is in the help screen, but for a
    pointer to each command of POINTED_AT it names."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("ranktop ", style("strong"))
    line.append(view.job_name, style("job"))
    if view.moment is not None:
        line.append("  ")
        line.append(moment_badge(view.moment, view.now, view.live_key, view.replaying,
                                 view.bundle),
                    style("moment"))
    elif view.replaying is not None:
        line.append("  ")
        line.append(replaying_badge(view.replaying), style("moment"))
    if view.paused:
        line.append("  ")
        line.append(f" PAUSED: {view.pause_key} to resume ", style("paused"))
    if view.waiting_since is not None:
        line.append("  ")
        line.append(waiting_text(view.status.name, view.now - view.waiting_since),
                    style(Health.SLOW.value))
        line.append(f"\n{_ranks_up(view)}", style("strong"))
        return line
    if view.moment is None:  # the source's health and the data's age are about now
        line.append_text(_freshness(view, style))
    if view.incidents:
        line.append("  ")
        line.append_text(_severity_counts(view.incidents, style))
    line.append(f"  {view.status.name}", style("muted"))
    line.append("\n")
    if view.ended is not None:  # first on its line: a narrow pane cuts from the end
        line.append(f" {view.ended.said(view.now)} · {view.earlier_key} earlier ",
                    style("moment"))
        line.append("  ")
    unknown = len(view.frame.unknown) if view.frame is not None else 0
    missing = view.n_ranks - view.ranks_up - unknown
    line.append(_ranks_up(view), style("strong"))
    if unknown:
        line.append("  ")
        line.append(f"{NOT_ANSWERED_MARK} {unknown:,} not answered (partial)", style("slow"))
    if view.frame is not None and missing:
        line.append("  ")
        line.append(f"{ALARM_MARK} {missing} missing", style("alarm"))
    for command in POINTED_AT:  # before the values: a narrow pane cuts the end
        if command in view.status.detail:
            line.append("  ")
            line.append(f"→ {command}", style("warn"))
    line.append(_job_values(view, style))
    return line


def _ranks_up(view: JobView) -> str:
    """"ranks 510/512 up"; without data, no count: "ranks: no answer yet (512 in the rank
    map)"."""
    if view.frame is not None:
        return f"ranks {view.ranks_up}/{view.n_ranks} up"
    known = f" ({view.n_ranks} in the rank map)" if view.n_ranks else ""
    return f"ranks: {'no answer yet' if view.waiting_since is not None else 'no data'}{known}"


def waiting_text(source: str, waited: float) -> str:
    """"◌ waiting for the first answer from demo (simulated)… 3.0 s": said where an
    all-clear or a count of ranks would stand before anything has answered."""
    return f"◌ waiting for the first answer from {source}… {_age(max(0.0, waited))}"


def _freshness(view: JobView, style: Styles) -> Text:
    """The source's health and how old its data is: "  ● ok  data 1.2 s old"."""
    text = Text("  ")
    text.append_text(_health(view, style))
    if view.frame is not None:
        age = max(0.0, view.now - view.frame.time)
        text.append(f"  data {_age(age)} old",
                    style("warn" if age > view.old_data_after else "muted"))
    return text


def severity_counts(incidents: Sequence[Incident]) -> list[tuple[int, str]]:
    """(count, name) of the anomaly panel's rows: the confirmed incidents by severity, most
    severe first, then the pending ones, the restarts on record ("resolved") and the
    anomalies folded under a row ("folded", no row of their own); only the names with a
    count. The counts of the rows add up to the panel's rows."""
    active = [i for i in incidents if i.root.kind != RESTART]
    confirmed = [i.severity for i in active if not i.pending]
    counts = [(confirmed.count(s), s) for s in SEVERITIES]
    counts.append((sum(1 for i in active if i.pending), "pending"))
    counts.append((len(incidents) - len(active), "resolved"))
    counts.append((sum(len(i.explained) for i in active), "folded"))
    return [(count, name) for count, name in counts if count]


MUTED_COUNTS = {"pending": "◌", "resolved": "✓"}  # rows not to act on, with their marks


def _severity_counts(incidents: Sequence[Incident], style: Styles) -> Text:
    """"● 1 critical ● 2 major ◌ 1 pending (3 folded)", each in its severity's style."""
    counts = severity_counts(incidents)
    text = Text(" ").join(
        Text(f"{MUTED_COUNTS[name]} {count} {name}", style("muted")) if name in MUTED_COUNTS
        else Text(f"● {count} {name}", style(name))
        for count, name in counts if name != "folded")
    for count, name in counts:
        if name == "folded":
            text.append(f" ({count} folded)", style("muted"))
    return text


def count_by_severity(incidents: Sequence[Incident]) -> str:
    """"2 critical, 1 major, 3 pending; 4 folded": the same counts, plain."""
    counts = severity_counts(incidents)
    rows = ", ".join(f"{count} {name}" for count, name in counts if name != "folded")
    folded = [f"; {count} folded" for count, name in counts if name == "folded"]
    return rows + "".join(folded)


def _health(view: JobView, style: Styles) -> Text:
    """● ok, or what is wrong and for how long: "● STALE for 45 s: connection refused"."""
    status = view.status
    if view.late_for and status.health in (Health.OK, Health.SLOW):
        # A poll overdue is news now, not at its timeout; a source already stale or down
        # keeps saying so, with its reason.
        late = style(Health.SLOW.value)
        return Text(f"● LATE: no answer for {_age(view.late_for)}", late)
    health = style(status.health.value)
    text = Text(f"● {status.health.value}", health)
    if status.partial:  # the data is part of the job's: said before anything else
        text = Text("● PARTIAL", health)
        text.append(f" for {_age(max(0.0, view.now - status.since))}", health)
    elif status.health is not Health.OK:
        text = Text(f"● {status.health.value.upper()}", health)
        text.append(f" for {_age(max(0.0, view.now - status.since))}", health)
    if status.message:
        text.append(f": {status.message}", health)
    return text


def _job_values(view: JobView, style: Styles) -> Text:
    text = Text()
    job = view.frame.job if view.frame is not None else {}
    step = job.get("step", float("nan"))
    if not is_missing(step):
        text.append(f"  step {step:,.0f}")
    if view.step_stuck_since is not None and view.frame is not None:
        stuck = view.frame.time - view.step_stuck_since
        if stuck >= view.no_progress_after:
            text.append("  ")
            text.append(f"{ALARM_MARK} no progress for {_age(stuck)}", style("alarm"))
    if not is_missing(view.step_seconds):
        text.append(f"  {view.step_seconds:.2f} s/step")
    if view.goodput is not None and view.goodput.known:
        text.append(f"  goodput {share_text(view.goodput)}")
    tokens = job.get("tokens_per_s", float("nan"))
    if not is_missing(tokens):
        text.append(f"  {tokens / 1e6:.2f} M tok/s")
    loss = job.get("loss", float("nan"))
    if not is_missing(loss):
        text.append(f"  loss {loss:.3f}")
    return text


def _age(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} m {seconds % 60:02.0f} s"
    return f"{seconds / 3600:.1f} h"


def rank_status(rank: Rank, frame: Frame | None, metrics: Mapping[str, MetricDef],
                style: Styles, width: int = 0) -> Text:
    """The selected rank: who it is, then its value of every metric.

    Each "name value" pair is kept whole: a line breaks between pairs once ``width`` is used.
    """
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"rank {rank.rank}", style("rank"))
    text.append(f" {rank.place} ", style("strong"))
    if frame is not None and rank.rank in frame.local:
        text.append("(NVML, this node) ", style("local"))
    if frame is None:
        return text
    up = any(not is_missing(frame.value(m, rank.rank)) for m in frame.values)
    if not up and rank.rank in frame.unknown:
        text.append(" not answered: the backend's answer is partial (not known, not down) ",
                    style("slow"))
        return text
    if not up:
        text.append(" no data from this rank ", style("no-data"))
        return text
    line_length = text.cell_len
    for metric_id in STATUS_ORDER:
        metric = metrics.get(metric_id)
        if metric is None or metric_id not in frame.values:
            continue
        value = frame.value(metric_id, rank.rank)
        shown = format_value(metric, value)
        pair_length = len(metric.short) + len(shown) + 2
        if width and line_length + pair_length > width:
            text.append("\n")
            line_length = 0
        text.append(f" {metric.short} ", style("muted"))
        text.append(shown, style(_breach_role(metric, value)))
        line_length += pair_length
    return text


def folded_note(titles: Sequence[str], any_gpu: bool) -> str:
    """What the folded maps would have shown, said once under the maps ("" for none):
    ``any_gpu`` whether other GPU metrics came (then these alone are missing)."""
    if not titles:
        return ""
    what = ", ".join(titles)
    missing = "not exported for this job" if any_gpu else "no GPU metrics (DCGM) for this job"
    return f"{missing}: {what} not shown — see check-config"


def _breach_role(metric: MetricDef, value: float) -> str:
    """"alarm" for a value past its warning threshold, "muted" for none, "" for the rest."""
    if is_missing(value):
        return "muted"
    if metric.unit == "flags":
        return "alarm" if int(value) & 0x68 else ""
    if metric.id == "xid":
        return "alarm"
    if metric.warn is None:
        return ""
    breached = value >= metric.warn if metric.bad == "high" else value < metric.warn
    return "alarm" if breached else ""


def no_verdict_yet(analysis: Analysis) -> str:
    """What `e` says before there is a hang verdict: what triage is waiting for."""
    frame = analysis.frame
    if frame is None or not analysis.progress.stalled(frame.time):
        return "No hang to triage: the job is making progress."
    stuck = _age(analysis.progress.stalled_for(frame.time))
    return (f"No verdict yet: no progress for {stuck}, and no rank has died or logged a "
            "watchdog timeout so far (NCCL's watchdog fires at its timeout, 10 min by "
            "default); the ranks' logs, where configured, are read again every 10 s.")

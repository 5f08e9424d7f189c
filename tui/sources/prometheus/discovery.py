"""Finding the job's own metrics when the configured names are absent.

A real job names its per-rank metrics its own way (``training_step_duration_seconds``,
``iteration_time``, ...) and labels the rank its own way (``rank``, ``global_rank``,
``RANK``). Discovery reads the metric names the backend holds, keeps those whose names look
like a step time, a compute time, a loss, a throughput or a step counter, reads each one's
label names, and sizes it with one small aggregate query: how many ranks under which job
label value. It returns the candidates, best first, and which of them is unambiguous.

It only reads, and it costs a few requests per candidate: `check-config` and `init` run it,
and the console runs it now and then while the configured metrics come back empty.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from . import promql
from .client import PromClient, QueryError

LOOK_BACK_SECONDS = 3600.0  # metrics that had samples this recently
MAX_CANDIDATES = 12  # sized, best names first; the rest are not worth the requests
GOOD_ENOUGH = 0.5  # a candidate below this is listed, never used

# What the exporters of a cluster name that is never the job's own.
INFRA_PREFIXES = ("DCGM_", "go_", "process_", "prometheus_", "promhttp_", "scrape_", "node_",
                  "kube_", "container_", "kubelet_", "apiserver_", "up", "ALERTS", "vm_",
                  "net_conntrack_", "grpc_", "http_", "nccl_")


@dataclass(frozen=True)
class Role:
    """One thing ranktop reads from the job: where it goes in the config and how it is read."""

    id: str
    title: str
    metric: str = ""  # the [metrics.<id>] it configures (per rank)
    job_key: str = ""  # or the [job_metrics] key it configures (job-wide)
    aggregate: str = ""  # how a job-wide value is made of the ranks' series


ROLES = (
    Role("step_time", "step time", metric="step_time"),
    Role("compute_time", "compute time", metric="compute_time"),
    Role("step", "step counter", job_key="step", aggregate="max"),
    Role("loss", "loss", job_key="loss", aggregate="avg"),
    Role("tokens_per_s", "tokens per second", job_key="tokens_per_s", aggregate="sum"),
    Role("samples_per_s", "samples per second", job_key="samples_per_s", aggregate="sum"),
    Role("checkpoint_step", "checkpoint step", job_key="checkpoint_step", aggregate="max"),
)
ROLE = {role.id: role for role in ROLES}
PER_RANK = ("step_time", "compute_time")

# Words of metric names (split at '_' and ':'), and of label names (lower-cased).
TIME = {"seconds", "second", "secs", "sec", "time", "duration", "latency", "ms"}
STEP = {"step", "steps", "iteration", "iterations", "iter", "iters", "batch"}
COMPUTE = {"compute", "computation", "forward", "backward", "fwd", "bwd", "fwdbwd"}
TOKENS = {"tokens", "token", "tok", "toks"}
SAMPLES = {"samples", "sample", "examples", "images", "sequences", "seqs"}
RATE = {"per", "ps", "throughput", "rate", "persec", "tps", "sps"}
CHECKPOINT = {"checkpoint", "ckpt", "checkpointed", "saved"}
TRAINING = {"train", "training", "trainer", "pretrain", "finetune"}
# A phase of the step, or another loop: not the step itself.
PHASES = {"optimizer", "optim", "data", "dataloader", "loader", "checkpoint", "ckpt", "eval",
          "evaluation", "val", "validation", "wait", "comm", "allreduce", "nccl", "io", "scale"}

RANK_LABELS = ("rank", "global_rank", "globalrank", "rank_id", "world_rank", "worker_rank",
               "process_rank", "trainer_rank", "proc_rank")
LOCAL_LABELS = ("local_rank", "localrank", "local_rank_id", "local_gpu", "gpu_index", "gpu",
                "cuda_device", "device_index")
HOST_LABELS = ("hostname", "host", "node", "nodename", "node_name", "kubernetes_node")
POD_LABELS = ("pod", "pod_name", "exported_pod", "kubernetes_pod_name")
UUID_LABELS = ("gpu_uuid", "uuid", "gpu_id_uuid")
# Labels that name the job, most specific first: one the job sets beats the scrape job.
JOB_LABELS = ("training_job", "job_name", "exported_job", "job_id", "jobid", "run", "run_id",
              "run_name", "experiment", "slurm_job_id", "hpc_job", "job")


@dataclass(frozen=True)
class Candidate:
    """A series that looks like one of the job's metrics, and how to read it."""

    role: str
    name: str  # the metric as found (a histogram's base name)
    promql: str  # with {job} where the job's selector goes
    fresh_metric: str  # the series whose newest sample says how fresh it is
    score: float  # 0..1, how sure discovery is
    labels: Mapping[str, str] = field(default_factory=dict)  # "rank", "local", "host", "pod",
    # "uuid", "job" -> the label name that plays it
    jobs: tuple[tuple[str, int], ...] = ()  # (job label value, ranks), most ranks first
    series: int = 0  # ranks (or series) found

    def label(self, part: str) -> str:
        return self.labels.get(part, "")


@dataclass(frozen=True)
class Discovery:
    """What discovery found: candidates per role, best first, and the job they belong to."""

    candidates: tuple[Candidate, ...] = ()
    job: str = ""  # the job label value the suggestion selects ("" for every job)
    job_label: str = ""
    other_jobs: tuple[str, ...] = ()  # other values of that label, when the job was not named
    missing: str = ""  # the job the user named, when no series carries it
    error: str = ""  # why discovery could not look, "" when it could

    def of(self, role: str) -> list[Candidate]:
        return [c for c in self.candidates if c.role == role]

    def best(self, role: str) -> Candidate | None:
        found = [c for c in self.of(role) if c.score >= GOOD_ENOUGH]
        return found[0] if found else None

    def unambiguous(self, role: str) -> bool:
        """One good candidate for the role, on one job: safe to use without the user saying."""
        good = [c for c in self.of(role) if c.score >= GOOD_ENOUGH]
        return len(good) == 1 and not self.other_jobs and not self.missing

    def __bool__(self) -> bool:
        return any(c.score >= GOOD_ENOUGH for c in self.candidates)


def discover(client: PromClient, job: str = "", now: float | None = None) -> Discovery:
    """Look for the job's metrics (``job``: the job's name, when the user gave one)."""
    since = (time.time() if now is None else now) - LOOK_BACK_SECONDS
    try:
        names = client.metric_names(since)
    except QueryError as error:
        return Discovery(error=f"cannot list the metrics: {error}")
    shortlist = sorted(_named_candidates(names), key=lambda c: -c.score)[:MAX_CANDIDATES]
    sized = []
    for candidate in shortlist:
        try:
            found = _sized(client, candidate, job, since)
        except QueryError:
            continue  # one candidate that cannot be read is no reason to stop looking
        if found is not None:
            sized.append(found)
    return _choose_job(sized, job)


# -- names ---------------------------------------------------------------------------------

def words(name: str) -> set[str]:
    """A metric name's words: ``training_step_duration_seconds`` -> training, step, ..."""
    return {w for w in re.split(r"[_:]+", name.lower()) if w}


def _named_candidates(names: Sequence[str]) -> list[Candidate]:
    present = set(names)
    found = []
    for name in names:
        if not promql.is_metric_name(name) or name.startswith(INFRA_PREFIXES):
            continue
        if name.endswith(("_bucket", "_created")):
            continue
        if name.endswith("_count") and f"{name[:-6]}_sum" in present:
            continue  # the histogram's _sum stands for it
        candidate = _by_name(name, present)
        if candidate is not None:
            found.append(candidate)
    return found


def role_of(name: str) -> tuple[str, float] | None:
    """The role a metric's name suggests, and how strongly (None: none)."""
    w = words(name)
    if w & CHECKPOINT and w & STEP and not w & TIME:
        return "checkpoint_step", 0.6  # the step it saved: a phase's name, not its time
    role, score = None, 0.0
    if "loss" in w and "scale" not in w:
        role, score = "loss", 0.6
    elif w & TOKENS and (w & RATE or w & TIME or name.endswith("_total")):
        role, score = "tokens_per_s", 0.6
    elif w & SAMPLES and (w & RATE or w & TIME or name.endswith("_total")):
        role, score = "samples_per_s", 0.55
    elif w & COMPUTE and w & TIME:
        role, score = "compute_time", 0.6
    elif w & STEP and w & TIME:
        role, score = "step_time", 0.6
    elif w & STEP and not w & RATE:
        role, score = "step", 0.5
    if role is None:
        return None
    if w & TRAINING:
        score += 0.1
    if role in PER_RANK and "seconds" in w:
        score += 0.05
    if w & PHASES:
        score -= 0.3
    return role, score


def _by_name(name: str, present: set[str]) -> Candidate | None:
    base = name[:-4] if name.endswith("_sum") else name
    histogram = name.endswith("_sum") and f"{base}_count" in present
    found = role_of(base if histogram else name)
    if found is None:
        return None
    role, score = found
    if histogram and role in PER_RANK:
        # A histogram or summary of durations: the mean of the last minute's steps.
        promql_text = f"rate({base}_sum{{job}}[1m]) / rate({base}_count{{job}}[1m])"
        return Candidate(role, base, promql_text, f"{base}_count", score)
    if histogram:
        return None  # a histogram of a loss or a rate is not one value per rank
    counter = name.endswith("_total") and role in ("tokens_per_s", "samples_per_s")
    rank_wise = f"rate({name}{{job}}[1m])" if counter else f"{name}{{job}}"
    return Candidate(role, name, rank_wise, name, score)


# -- labels --------------------------------------------------------------------------------

def label_roles(label_names: Sequence[str]) -> dict[str, str]:
    """Which label plays which part ("rank", "local", "host", "pod", "uuid"): the first of
    each part's known names that the series carry, compared without case."""
    by_lower = {n.lower(): n for n in label_names if promql.is_label_name(n)}
    parts = {}
    for part, known in (("rank", RANK_LABELS), ("local", LOCAL_LABELS), ("host", HOST_LABELS),
                        ("pod", POD_LABELS), ("uuid", UUID_LABELS)):
        name = next((by_lower[k] for k in known if k in by_lower), "")
        if name:
            parts[part] = name
    return parts


def _job_labels(label_names: Sequence[str]) -> list[str]:
    present = {n for n in label_names if promql.is_label_name(n)}
    return [name for name in JOB_LABELS if name in present]


def _sized(client: PromClient, candidate: Candidate, job: str, since: float
           ) -> Candidate | None:
    """The candidate with its labels and how many ranks each job value has (None: it has no
    series now)."""
    names = client.label_names(candidate.fresh_metric, since)
    parts = label_roles(names)
    jobs = _job_labels(names)
    series = candidate.fresh_metric
    rows = _counted(client, series, jobs, parts.get("rank", ""))
    if "rank" in parts and not rows:
        parts.pop("rank")  # the label holds no whole numbers: not a rank
        rows = _counted(client, series, jobs, "")
    chosen, values = _pick_job_label(jobs, rows, job)
    if chosen and job in dict(values):
        # The labels of the named job's series only (others may label theirs otherwise).
        own = client.label_names(f"{series}{promql.selector({chosen: job})}", since)
        parts = {part: label for part, label in label_roles(own).items()
                 if part != "rank" or "rank" in parts}
    if chosen:
        parts["job"] = chosen
    score = candidate.score + _label_bonus(candidate.role, parts)
    total = dict(values).get(job) or sum(count for _, count in values) or sum(
        count for _, count in rows)  # the named job's ranks, else every job's
    if not total:
        return None  # named in the last hour, gone now
    return Candidate(candidate.role, candidate.name, candidate.promql, candidate.fresh_metric,
                     round(min(score, 1.0), 2), parts, tuple(values), total)


def _counted(client: PromClient, series: str, jobs: list[str], rank: str
             ) -> list[tuple[dict, int]]:
    """Per combination of job label values: how many ranks (with ``rank``), else series."""
    if rank:
        matcher = promql.selector({}, f'{rank}=~"[0-9]+"')
        inner = f"count by ({', '.join([*jobs, rank])}) ({series}{matcher})"
    else:
        inner = series
    counted = client.query(f"count by ({', '.join(jobs)}) ({inner})" if jobs else
                           f"count({inner})")
    return [(dict(s.labels), int(s.value)) for s in counted]


def _pick_job_label(jobs: list[str], rows: list[tuple[dict, int]], job: str
                    ) -> tuple[str, list[tuple[str, int]]]:
    """The label that names the job, and its values with their ranks, most first.

    With the job named, the first label (most specific first) that holds that name; else
    (or when none holds it) the most specific label the series carry."""
    tallies = []
    for label in jobs:
        values: dict[str, int] = {}
        for labels, count in rows:
            value = labels.get(label, "")
            values[value] = values.get(value, 0) + count
        tallies.append((label, sorted(values.items(), key=lambda item: (-item[1], item[0]))))
    holding = [(label, values) for label, values in tallies if job in dict(values)]
    return (holding or tallies or [("", [])])[0]


def _label_bonus(role: str, parts: Mapping[str, str]) -> float:
    if role not in PER_RANK:
        return 0.05 if parts.get("job") else 0.0
    if "rank" not in parts:
        return -0.3  # a per-rank map needs a rank to place each value
    return 0.2 + (0.05 if "local" in parts else 0.0) + (
        0.05 if "host" in parts or "pod" in parts else 0.0)


def _choose_job(candidates: list[Candidate], job: str) -> Discovery:
    """Every candidate on the job the best step-time candidate (else the best one) runs."""
    ordered = sorted(candidates, key=lambda c: (ROLES.index(ROLE[c.role]), -c.score, c.name))
    lead = next((c for c in ordered if c.role == "step_time" and c.score >= GOOD_ENOUGH),
                next((c for c in ordered if c.score >= GOOD_ENOUGH), None))
    if lead is None or not lead.label("job"):
        return Discovery(tuple(ordered))
    label, values = lead.label("job"), [value for value, _ in lead.jobs]
    if not values:
        return Discovery(tuple(ordered))
    if job in values:
        return Discovery(tuple(ordered), job, label)
    # The job was not named, or is not there: the one with the most ranks, and the others
    return Discovery(tuple(ordered), values[0], label, tuple(values[1:]), missing=job)

"""Prometheus as a source: one query per metric per poll returns every rank.

The job's own per-rank metrics name the ranks (or a rank-map file, the Slurm node list, or
the order of DCGM's hosts and GPUs); DCGM series join to them by GPU UUID, else by host and
GPU. Each answer carries only the labels the join reads; the rank map, and the join made
from it, are kept until the labels they were learned from change, so a poll costs one lookup
per series whatever the number of ranks.

A poll that fails keeps the last good frame on screen, marked stale, and says why; so does
one whose answers turn out unreadable after they came. A server that is struggling (429,
503) is asked nothing more that poll, and its Retry-After is kept in ``retry_after``. A
poll's answers share one budget of bytes (``POLL_BYTES``, counted inflated): once it is
spent, the poll's remaining queries are not sent, and its status says so. While
the job's metrics or DCGM's come back empty, the finder looks for them and asks why
(finder.py); an unambiguous find is used at once, and said so.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ranktop.tui.core import rank_merge, ranks
from ranktop.tui.core.domain import DCGM_GPU_LABEL, DCGM_HOST_LABELS, DCGM_MODEL_LABELS
from ranktop.tui.core.history import Point
from ranktop.tui.core.lookback import SEEN_SECONDS, SEEN_STEP, Lookback
from ranktop.tui.core.model import MISSING, Frame, Health, Rank, RankMap, SourceStatus
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources import promql
from ranktop.tui.sources.base import Source
from ranktop.tui.sources.bounded_body import ByteBudget
from ranktop.tui.sources.finder import Finder
from ranktop.tui.sources.prom_client import (
    TOO_LARGE,
    VICTORIA_METRICS,
    PromClient,
    QueryError,
    Sample,
    Vector,
    shown_url,
)

# DCGM's "blank" sentinels (not supported, not found, ...) are no data, not values.
DCGM_INT_BLANK = float(0x7FFFFFFFFFFFFFF0)  # past DCGM_FP_BLANK: one test finds both
DCGM_FP_BLANK = 140737488355328.0
SLOW_SECONDS = 5.0
# Failures after which the rest of a poll's queries are not sent: the server is not there,
# or it asked to be left alone.
GIVE_UP_KINDS = ("connection refused", "cannot connect", "timed out", "TLS", "HTTP 429",
                 "HTTP 503")
POLL_BYTES = 512_000_000  # a poll of 16,384 ranks reads ~29 MB of JSON
OLD_DATA_SECONDS = 5.0  # newest sample older than this: the status says how old
FRESH_KEYS = ("fresh:dcgm", "fresh:job")
STEP_METRIC = "step_time"  # the job's metric whose labels name the ranks
PROBE_METRIC = "temperature"  # the DCGM metric whose labels name hosts, pods and models
_MODEL, _OLD_MODEL = DCGM_MODEL_LABELS
Answers = dict[str, Vector]  # query key -> what it returned
UNKNOWN = RankMap(ranks=(), hosts=(), gpus_per_node=1, source="not known yet")


class PrometheusSource(Source):
    """Frames of a training job read from any PromQL-compatible API."""

    def __init__(self, settings: Settings, client: PromClient | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client or PromClient(settings.prometheus)
        self.clock = clock
        self.name = f"Prometheus {shown_url(settings.prometheus.url)}"
        self.job_name = settings.prometheus.job or "all jobs"
        self.configured = settings  # as the user's config says (finds may add to it)
        self.rank_map = UNKNOWN
        self._use(settings)
        self.finder = Finder(self.client, clock)
        self._last: Frame | None = None
        self._models: dict[int, str] = {}  # rank -> DCGM's modelName
        self._models_read = False  # whether DCGM's labels were read for them yet
        self._originals: dict[str, str] = {}  # host or pod shown -> as its label holds it
        self._status = SourceStatus(self.name, Health.STALE, since=clock(),
                                    message="waiting for the first poll")
        self.retry_after: float | None = None  # what the server last asked us to wait

    def _use(self, settings: Settings) -> None:
        """Read the job as ``settings`` say (again when a find is used)."""
        self.settings = settings
        self.prom = settings.prometheus
        self.rank_settings = settings.ranks
        self._dcgm = promql.dcgm_selector(self.prom.dcgm_selector)
        self._job = promql.job_selector(self.rank_settings.job_label, self.prom.job)
        self._seen: tuple[frozenset, frozenset] | None = None  # labels the map came from
        self._join_ranks(self.rank_map)

    def _join_ranks(self, rank_map: RankMap) -> None:
        """Read series through ``rank_map`` from now on (the queries ask for its labels)."""
        self._join = ranks.DcgmJoin(rank_map, self.rank_settings.rank_label)
        self._queries = self._make_queries()

    async def poll(self) -> Frame:
        return await asyncio.to_thread(self.poll_now)

    def status(self) -> SourceStatus:
        return self._status

    def gpu_model(self, rank: int) -> str:
        """The rank's GPU model, where DCGM's labels named it."""
        return self._models.get(rank, "")

    def poll_now(self) -> Frame:
        """One blocking poll; raises QueryError when nothing at all could be read."""
        started = self.clock()
        budget = ByteBudget(POLL_BYTES)
        answers, failures = self._run_queries(budget)
        self.retry_after = max((f.retry_after for f in failures if f.retry_after is not None),
                               default=None)
        if not answers:
            self._fail(failures[0] if failures else QueryError("no queries", ""))
        found = self.finder.after_poll(self.settings, _empty(answers, f"metric:{STEP_METRIC}"),
                                       _empty(answers, f"metric:{PROBE_METRIC}"))
        if found is not None:  # an unambiguous find: read the job through it from now on
            self._use(found)
            answers, failures = self._run_queries(budget)
        try:
            if self._learn_ranks(answers) or not self._models_read:
                self._learn_models(answers)
            frame = self._frame(answers, started)
        except QueryError as error:  # an answer that came but cannot be read
            self._fail(error)
        self._last = frame
        self._report(frame, failures, self.clock() - started, _newest(answers),
                     _warnings(answers))
        return frame

    # -- querying ----------------------------------------------------------------------

    def queries(self) -> dict[str, str]:
        """Every query of a poll, by what it is for."""
        return dict(self._queries)

    def _make_queries(self) -> dict[str, str]:
        """Each answer carries only the labels that place its series on a rank (and, for the
        two the rank map is learned from, the labels it is learned from)."""
        joined = (self.rank_settings.rank_label, *self._join.labels)
        metrics = {
            f"metric:{m.id}": promql.keep(
                promql.metric_query(m.queries, self._dcgm, self._job),
                (*joined, *self._learned_from(m.id), promql.WAY_LABEL if len(m.queries) > 1
                 else ""))
            for m in self.settings.metrics.values() if m.queries
        }
        jobs = {f"job:{k}": promql.fill(q, self._dcgm, self._job)
                for k, q in self.settings.job_metrics.items()}
        fresh = {
            "fresh:dcgm": promql.freshness_query(promql.DCGM_PROBE_METRIC, self._dcgm),
            "fresh:job": promql.freshness_query(self.rank_settings.step_metric, self._job),
        }
        return {**metrics, **jobs, **{k: promql.keep(q, joined) for k, q in fresh.items()}}

    def _learned_from(self, metric_id: str) -> tuple[str, ...]:
        """The labels the rank map (and each GPU's model) is read from, on the metrics
        they are read from."""
        rs = self.rank_settings
        if metric_id == STEP_METRIC:
            return (rs.rank_label, rs.host_label, rs.local_gpu_label, rs.uuid_label,
                    rs.pod_label)
        if metric_id == PROBE_METRIC:
            return (DCGM_GPU_LABEL, *DCGM_HOST_LABELS, *DCGM_MODEL_LABELS)
        return ()

    def _run_queries(self, budget: ByteBudget) -> tuple[Answers, list[QueryError]]:
        answers: Answers = {}
        failures: list[QueryError] = []
        sent = 0
        for key, expression in self._queries.items():
            if budget.spent:
                break
            sent += 1
            try:
                answers[key] = self.client.query(expression, budget)
            except QueryError as error:
                failures.append(error.bare())
                if error.kind in GIVE_UP_KINDS:
                    break
        if budget.spent:  # said first, in place of the answer that spent it
            if failures and failures[-1].kind == TOO_LARGE:
                failures.pop()
            failures.insert(0, QueryError(
                TOO_LARGE, f"this poll's answers passed {budget.limit // 1_000_000} MB; "
                           f"{len(self._queries) - sent} more queries not sent"))
        return answers, failures

    def _fail(self, error: QueryError) -> None:
        now = self.clock()
        since = self._status.since if self._status.health is not Health.OK else now
        health = Health.STALE if self._last is not None else Health.ERROR
        self._status = SourceStatus(self.name, health, since=since, message=str(error),
                                    last_ok=self._status.last_ok, detail=self._status.detail)
        raise error

    # -- history ---------------------------------------------------------------------

    def backfill(self, rank: int, metrics: Sequence[str], seconds: float, step: float
                 ) -> dict[str, list[Point]]:
        """A rank's recent values and the job's median, from range queries (blocking)."""
        if not 0 <= rank < len(self.rank_map):
            return {}
        now = self.clock()
        found: dict[str, list[Point]] = {}
        for metric_id in metrics:
            metric = self.settings.metrics.get(metric_id)
            if metric is None or not metric.queries:
                continue
            mine = self._first_series(self._rank_query(metric, rank), now - seconds, now, step)
            whole = promql.metric_query(metric.queries, self._dcgm, self._job)
            typical = dict(self._first_series(f"quantile(0.5, {whole})", now - seconds, now,
                                              step))
            found[metric_id] = [Point(t, _clean(v), typical.get(t, MISSING)) for t, v in mine]
        return found

    def lookback(self, job_values: Sequence[str], seconds: float, step: float) -> Lookback:
        """The job's values over the last ``seconds`` (range queries), and when each rank's
        step series last had a sample within ``SEEN_SECONDS`` (blocking; QueryError)."""
        now = self.clock()
        job = {}
        for name in job_values:
            query = self.settings.job_metrics.get(name)
            if query:
                points = self._first_series(promql.fill(query, self._dcgm, self._job),
                                            now - seconds, now, step)
                job[name] = [(t, v) for t, v in points if not math.isnan(_clean(v))]
        return Lookback(job, self._last_seen(), SEEN_STEP)

    def _last_seen(self) -> dict[int, float]:
        """Each rank's newest step sample within SEEN_SECONDS, by the job's rank label."""
        label = promql.label_name(self.rank_settings.rank_label)
        newest = promql.freshness_query(self.rank_settings.step_metric, self._job)
        answer = self.client.query(f"max by ({label}) (max_over_time({newest}"
                                   f"[{SEEN_SECONDS:.0f}s:{SEEN_STEP:.0f}s]))")
        found: dict[int, float] = {}
        for labels, when in answer.pairs():
            rank = ranks.rank_number(labels.get(self.rank_settings.rank_label, ""))
            if rank is not None and rank < len(self.rank_map):
                found[rank] = when
        return found

    def _rank_query(self, metric, rank: int) -> str:
        """The metric's query narrowed to one rank's GPU and the job's series of that rank,
        by its host and pod as their labels hold them (not as the screen shows them)."""
        rs = self.rank_settings
        job = {**promql.job_labels(rs.job_label, self.prom.job), rs.rank_label: str(rank)}
        return promql.rank_query(metric.queries, self.held(self.rank_map.ranks[rank]),
                                 self.prom.dcgm_selector, job)

    def held(self, rank: Rank) -> Rank:
        """``rank`` with its host and pod as their labels hold them, for a query about it:
        the map holds them plain, as the screen shows them."""
        return replace(rank, host=self._originals.get(rank.host, rank.host),
                       pod=self._originals.get(rank.pod, rank.pod))

    def _first_series(self, expression: str, start: float, end: float, step: float
                      ) -> list[tuple[float, float]]:
        series = self.client.query_range(expression, start, end, step)
        return series[0].points if series else []

    # -- ranks -------------------------------------------------------------------------

    def _learn_ranks(self, answers: Answers) -> bool:
        """Resolve the rank map, again whenever the labels it is learned from change (a
        better source for it appears, ranks come or go), and say whether they did; else
        keep it as it is."""
        step = [labels for labels, _ in _pairs(answers, STEP_METRIC)]
        rs = self.rank_settings
        guessed = self.rank_map.source.startswith(ranks.FROM_DCGM)
        # Each rank's node comes from DCGM's series only where the job's series name a pod
        # and no host; the guessed map comes from DCGM's series alone.
        by_pod = any(rs.host_label not in labels and labels.get(rs.pod_label)
                     for labels in step) if rs.pod_label else False
        dcgm = [labels for labels, _ in _pairs(answers, PROBE_METRIC)] if (
            by_pod or guessed) else []
        seen = (_label_sets(step), _label_sets(dcgm))
        if seen == self._seen and self.rank_map.ranks:
            return False
        self._seen = seen
        for metric_id in (STEP_METRIC, PROBE_METRIC):
            answer = answers.get(f"metric:{metric_id}")
            self._originals.update(getattr(answer, "originals", {}))
        pods = ranks.nodes_of_pods(dcgm) if by_pod else {}
        learned = ranks.from_job_series(step, rs.rank_label, rs.host_label,
                                        rs.local_gpu_label, rs.uuid_label, rs.pod_label, pods,
                                        known=len(self.rank_map))
        if learned is None and (guessed or not self.rank_map.ranks):
            learned = self._fallback_ranks(
                dcgm or [labels for labels, _ in _pairs(answers, PROBE_METRIC)])
        if learned is not None:
            merged, _ = rank_merge.merge(self.rank_map, learned)
            if merged is not self.rank_map:
                self.rank_map = merged
                self._join_ranks(merged)
        return True

    def _fallback_ranks(self, dcgm: list[ranks.Labels]) -> RankMap | None:
        rs = self.rank_settings
        try:
            if rs.rank_map_file is not None:
                return ranks.from_file(rs.rank_map_file)
            if rs.slurm_nodelist:
                return ranks.from_slurm(rs.slurm_nodelist, rs.gpus_per_node)
        except ranks.RankMapError as error:
            raise QueryError("rank map", str(error)) from None
        return ranks.from_dcgm(dcgm)

    # -- the frame ---------------------------------------------------------------------

    def _frame(self, answers: Answers, now: float) -> Frame:
        n = len(self.rank_map)
        values: dict[str, list[float]] = {}
        shows: dict[str, str] = {}
        for metric in self.settings.metrics.values():
            key = f"metric:{metric.id}"
            if key not in answers:  # its query failed: keep what it showed last
                if self._last is not None and metric.id in self._last.values:
                    values[metric.id] = list(self._last.values[metric.id])
                continue
            if answers[key]:
                values[metric.id], shows[metric.id] = self._per_rank(answers[key], metric, n)
        job = {k.split(":", 1)[1]: _scalar(v) for k, v in answers.items() if k.startswith("job:")}
        for metric_id, found in self.finder.shows.items():
            if metric_id in values and not shows.get(metric_id):
                shows[metric_id] = found
        return Frame(time=now, values=values, job=job, stale=self._stale(answers, now, n),
                     shows=shows, absent=self.finder.notes(self.settings, values))

    def _per_rank(self, answer: Vector, metric, n: int) -> tuple[list[float], str]:
        values = [MISSING] * n
        ways: dict[str, int] = {}
        rank_of = self._join.rank_of
        several = len(metric.queries) > 1
        for labels, value in answer.pairs():
            rank = rank_of(labels)
            if rank is None:
                continue
            values[rank] = _clean(value)
            if several:
                way = labels.get(promql.WAY_LABEL, "0")
                ways[way] = ways.get(way, 0) + 1
        return values, _ways_shown(metric.queries, ways)

    def _learn_models(self, answers: Answers) -> None:
        """Each rank's GPU model, as DCGM's labels name it (read again when they change)."""
        for labels, _ in _pairs(answers, PROBE_METRIC):
            self._models_read = True
            model = labels.get(_MODEL) or labels.get(_OLD_MODEL)
            if model:
                rank = self._join.rank_of(labels)
                if rank is not None:
                    self._models[rank] = model

    def _stale(self, answers: Answers, now: float, n: int) -> frozenset[int]:
        newest = [-math.inf] * n
        rank_of = self._join.rank_of
        for key in FRESH_KEYS:
            for labels, value in answers[key].pairs() if key in answers else ():
                rank = rank_of(labels)
                if rank is not None and value > newest[rank]:
                    newest[rank] = value
        limit = now - self.rank_settings.stale_after_seconds
        return frozenset(r for r, t in enumerate(newest) if -math.inf < t < limit)

    def _report(self, frame: Frame, failures: list[QueryError], took: float, newest: float,
                warnings: list[str]) -> None:
        matched = sum(1 for v in frame.values.get(PROBE_METRIC, ()) if not math.isnan(v))
        now = self.clock()
        notes = [f"ranks from {self.rank_map.source}, DCGM {matched}/{len(self.rank_map)}",
                 self.rank_map.left_out,
                 self._age_note(now - newest), self.finder.status_note()]
        detail = "; ".join(note for note in notes if note)
        if failures:
            health, message = Health.SLOW, (f"partial: {len(failures)} of "
                                            f"{len(self._queries)} queries failed "
                                            f"({failures[0]}); those maps keep their last values")
        elif warnings:
            health, message = Health.SLOW, (f"partial answer: the backend warns "
                                            f"{warnings[0]!r}; some series may be missing")
        elif not any(frame.values.values()):
            why = "; ".join(w for w in (self.finder.why.job, self.finder.why.dcgm) if w)
            health, message = Health.ERROR, f"no series for job {self.job_name!r}" + (
                f": {why}" if why else "")
        elif len(frame.stale) >= len(self.rank_map) > 0:  # answers, but nothing new in them
            health, message = Health.STALE, (
                f"no rank has a sample newer than {self.rank_settings.stale_after_seconds:.0f} s:"
                f" are the exporters running?")
        elif took > max(SLOW_SECONDS, self.settings.refresh_seconds):
            health, message = Health.SLOW, f"slow: the poll took {took:.1f} s"
        else:
            health, message = Health.OK, ""
        since = self._status.since if self._status.health is health else now
        self._status = SourceStatus(self.name, health, since=since, message=message,
                                    last_ok=now, detail=detail)

    def _age_note(self, age: float) -> str:
        """How old the newest sample is, when it is older than the poll suggests."""
        if not OLD_DATA_SECONDS < age < math.inf:
            return ""
        note = f"newest sample {age:.0f} s old"
        if self.client.backend == VICTORIA_METRICS and not self.prom.latency_offset:
            note += (" (VictoriaMetrics hides its newest samples, 30 s by default: set "
                     "[prometheus] latency_offset = \"1s\")")
        return note


def _newest(answers: Answers) -> float:
    """The time of the newest sample the freshness queries saw (-inf: none)."""
    return max((value for key in FRESH_KEYS if key in answers
                for _, value in answers[key].pairs()), default=-math.inf)


def _warnings(answers: Answers) -> list[str]:
    """What the backend warned of (a partial answer), from every query."""
    return [w for answer in answers.values() for w in getattr(answer, "warnings", ())]


def _pairs(answers: Answers, metric_id: str) -> Iterable[tuple[ranks.Labels, float]]:
    """The labels and value of each series of a metric's answer (none if it failed)."""
    answer = answers.get(f"metric:{metric_id}")
    return answer.pairs() if answer is not None else ()


def _label_sets(series: list[ranks.Labels]) -> frozenset[tuple[tuple[str, str], ...]]:
    """The series' label sets, whatever the order of the series (the labels of each come
    in the order the server keeps them: the same every poll)."""
    return frozenset(tuple(labels.items()) for labels in series)


def _empty(answers: Answers, key: str) -> bool:
    """Whether the query was answered, with nothing."""
    return key in answers and not answers[key]


def _clean(value: float) -> float:
    """NaN for DCGM's blank sentinels (the integer one is the larger) and for infinities."""
    return value if -math.inf < value < DCGM_FP_BLANK else MISSING


def _scalar(samples: Iterable[Sample]) -> float:
    first = next(iter(samples), None)
    return MISSING if first is None else _clean(first.value)


def _ways_shown(queries, ways: dict[str, int]) -> str:
    """The name of the way most GPUs were read ("+ others" when they differ)."""
    if len(queries) < 2 or not ways:
        return ""
    best = max(ways, key=ways.get)
    index = int(best) if best.isdecimal() and int(best) < len(queries) else 0
    return queries[index].shows + (" + others" if len(ways) > 1 else "")

"""Prometheus as a source: one query per metric per poll returns every rank.

Each answer carries only the labels the join to the ranks reads. The rank map, and the join
of DCGM's series to it, are learned from a poll's first answers (prom_ranks) and kept until
the labels they were learned from change, so a poll costs one lookup per series whatever the
number of ranks.

A poll that fails keeps the last good frame on screen, marked stale, and says why; so does
one whose answers turn out unreadable after they came. A server that is struggling (429,
503) is asked nothing more that poll, and its Retry-After is kept in ``retry_after``. A
poll's answers share one budget of bytes (``POLL_BYTES``, counted inflated): once it is
spent, the poll's remaining queries are not sent, and its status says so (what a status
says after a poll: prom_status). While the job's metrics or DCGM's come back empty, the
finder looks for them and asks why (finder.py); an unambiguous find is used at once, and
said so. A past moment's frame is what a copy of the source polls from the backend's
history (prom_past); the source itself is left as it was.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from ...core import ranks
from ...core.advice.tenants import NodeTenants
from ...core.detect.goodput import JOB_LOOKBACK_STEP_SECONDS
from ...core.detect.hardware import COUNTERS as LEDGER_COUNTERS
from ...core.detect.hardware import WINDOW_SECONDS as LEDGER_WINDOW_SECONDS
from ...core.detect.lookback import SEEN_SECONDS, SEEN_STEP, Lookback
from ...core.history import Point
from ...core.model import MISSING, Frame, Health, Rank, RankMap, SourceStatus
from ...settings.config import Settings
from ..base import Source
from ..bounded_body import ByteBudget
from . import batch as prom_batch
from . import join as prom_join
from . import past as prom_past
from . import promql
from . import rules as prom_rules
from . import targets as prom_targets
from . import tenants as prom_tenants
from .client import TOO_LARGE, PromClient, QueryError, Vector, shown_url
from .counters import SlowCounters
from .finder import Finder
from .join import Answers, Polled, clean
from .ranks import PROBE_METRIC, RANK_KEYS, STEP_METRIC, RankLearner
from .status import PollReport

# Failures after which the rest of a poll's queries are not sent: the server is not there,
# or it asked to be left alone.
GIVE_UP_KINDS = ("connection refused", "cannot connect", "timed out", "TLS", "HTTP 429",
                 "HTTP 503")
POLL_BYTES = 512_000_000  # a poll of 16,384 ranks reads ~29 MB of JSON
RECORDED_KEY = "recorded"
COUNTER_STEP_SECONDS = 60.0  # how finely a late start looks for the counters' lowest value
DAY_SECONDS = 86_400.0
# Where a job's step series ended, when not in the last SEEN_SECONDS: first the day with
# its last samples (in ten years), then the stretch of that day, each ending the next look.
END_LOOKS = ((3650 * DAY_SECONDS, DAY_SECONDS), (DAY_SECONDS, JOB_LOOKBACK_STEP_SECONDS))


class PrometheusSource(Source):
    """Frames of a training job read from any PromQL-compatible API."""

    keeps_past = True  # the backend's history: any moment it still holds

    def __init__(self, settings: Settings, client: PromClient | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.client = client or PromClient(settings.prometheus)
        # what the job's queries are read through: the client, a RangeClient in a past copy
        self.reader: prom_batch.Querying = self.client
        self.clock = clock
        self.name = f"Prometheus {shown_url(settings.prometheus.url)}"
        self.job_name = settings.prometheus.job or "all jobs"
        self.configured = settings  # as the user's config says (finds may add to it)
        self.learner = RankLearner()
        self.live = True  # its frames are of now: the scrape's state may be read
        # when the scrape's state was last asked, for which ranks down, and what it said
        self._scrape: tuple[float, frozenset[int], dict[int, str]] = (0.0, frozenset(), {})
        self.counters = SlowCounters()
        self.ranges = prom_past.RangeCache()  # the past's answers, kept between replays
        # A past copy's join labels before it learns the ranks: the live source's, so that
        # its first queries are those it sends from then on (the ranges kept serve them).
        self.expected_join: tuple[str, ...] | None = None
        self._use(settings)
        self.finder = Finder(self.client, clock)
        self._last: Frame | None = None
        self._status = SourceStatus(self.name, Health.STALE, since=clock(),
                                    message="waiting for the first poll")
        self.retry_after: float | None = None  # what the server last asked us to wait
        self._report = PollReport()

    def _use(self, settings: Settings) -> None:
        """Read the job as ``settings`` say (again when a find is used)."""
        self.settings = settings
        self.prom = settings.prometheus
        self.rank_settings = settings.ranks
        self._dcgm = promql.dcgm_selector(self.prom.dcgm_selector)
        self._job = promql.job_selector(self.rank_settings.job_label, self.prom.job)
        # metric -> the one way its GPUs answered, and how many did: asked alone from then on
        self._ways: dict[str, int] = {}
        self._recorded: frozenset[str] = frozenset()  # metrics Prometheus records by rank
        self._way_gpus: dict[str, int] = {}
        self.learner.use(self.rank_settings)
        self._joined_anew()
        self._queries = self._sending = self._make_queries()

    def _joined_anew(self) -> None:
        """The queries ask for the new join's labels from the next poll on (a poll's
        queries stay as they were sent)."""
        self._requery = True
        self.counters.read_in_full()

    @property
    def rank_map(self) -> RankMap:
        return self.learner.rank_map

    @rank_map.setter
    def rank_map(self, rank_map: RankMap) -> None:
        self.learner.rank_map = rank_map

    async def poll(self) -> Frame:
        return await asyncio.to_thread(self.poll_now)

    def status(self) -> SourceStatus:
        return self._status

    def gpu_model(self, rank: int) -> str:
        """The rank's GPU model, where DCGM's labels named it."""
        return self.learner.gpu_model(rank)

    def poll_now(self) -> Frame:
        """One blocking poll; raises QueryError when nothing at all could be read."""
        started = self.clock()
        budget = ByteBudget(POLL_BYTES)
        asked_for = set(self._join_labels())
        polled = self._gather(budget)
        if not asked_for.issuperset(self.learner.join.labels):
            # The ranks were learned anew (the job's own, where they were guessed) and the
            # answers were grouped without the labels their join reads: another job's GPU
            # of the same host and index could stand for a rank. Asked again, as now joined.
            polled = self._gather(budget)
        found = self.finder.after_poll(self.settings, f"metric:{STEP_METRIC}" in polled.empty,
                                       f"metric:{PROBE_METRIC}" in polled.empty)
        if found is not None:  # an unambiguous find: read the job through it from now on
            self._use(found)
            polled = self._gather(budget)
        frame = self._frame(polled, started)
        if self.live:
            frame = self._with_scrape_errors(frame)
        self._last = frame
        self.ranges.let_go_if_idle()
        self._status = self._report.status(self, frame, polled, self.clock() - started,
                                           len(self._queries))
        return frame

    def _with_scrape_errors(self, frame: Frame) -> Frame:
        """``frame`` with why the scrape of each rank down fails (prom_targets), asked when
        a rank goes down and then every ``prom_targets.ASK_EVERY_SECONDS`` while any is."""
        down = frozenset(rank for rank, up in enumerate(frame.ranks_up(len(self.rank_map)))
                         if not up) - frame.unknown
        asked_at, asked_for, found = self._scrape
        if down and (not down <= asked_for
                     or frame.time - asked_at >= prom_targets.ASK_EVERY_SECONDS):
            rs = self.rank_settings
            found = prom_targets.scrape_errors(self.client, down, rs.step_metric, self._job,
                                               rs.rank_label)
            self._scrape = (frame.time, down, found)
        kept = {rank: words for rank, words in found.items() if rank in down}
        return replace(frame, scrape=kept) if kept else frame

    def _gather(self, budget: ByteBudget) -> Polled:
        """Every query's answer, joined to the ranks as it comes in. The first few queries
        (the two the rank map is learned from first) are answered before the others are
        sent, and held until the map is learned from them. Fails (QueryError) when nothing
        could be read."""
        polled = Polled()
        stop = threading.Event()
        self.counters.start_poll()
        self._sending = {key: self.counters.ask(key.removeprefix("metric:"), expression)
                         for key, expression in self._queries.items()}
        queries = list(self._sending.items())
        first = dict(queries[:prom_batch.CONCURRENT])
        try:
            held = dict(self._answers(first, budget, polled, stop))
            fresh = [self._fresh_part(held, key) for key in RANK_KEYS if key in held]
            self._learn(held, polled)
            del held
            for part in fresh:
                prom_join.fresh_times(part, polled, self.learner.join.rank_of)
            for key, answer in self._answers(dict(queries[len(first):]), budget, polled, stop):
                self._join_answer(polled, key, answer)
        except QueryError as error:  # an answer that came but cannot be read
            self._fail(error)
        if self._requery:
            self._queries, self._requery = self._make_queries(), False
            self._sending = self._queries
        self._summarise_failures(polled, budget)
        if not polled.answered:
            self._fail(polled.failures[0] if polled.failures else QueryError("no queries", ""))
        return polled

    def _answers(self, queries: dict[str, str], budget: ByteBudget, polled: Polled,
                 stop: threading.Event) -> Iterator[tuple[str, Vector]]:
        """The answers to ``queries`` as they come in; failures, queries not sent and how
        long each answer took are counted in ``polled``."""
        for key, answer, seconds in prom_batch.answers(self.reader, queries, budget, _gives_up,
                                                       stop, self.clock):
            if isinstance(answer, Vector):
                polled.timed(key, seconds, answer.size)
                polled.took(key, answer)
                yield key, answer
            elif isinstance(answer, QueryError):
                polled.timed(key, seconds)
                polled.failures.append(answer)
            else:  # prom_batch.NOT_SENT
                polled.not_sent += 1

    @staticmethod
    def _fresh_part(held: Answers, key: str) -> Vector:
        """The freshness series folded into ``key``'s answer, taken out of it."""
        held[key], fresh = held[key].parted(promql.FRESH_LABEL)
        return fresh

    def _learn(self, held: Answers, polled: Polled) -> None:
        """The rank map (and GPU models) from the answers in so far, then those joined."""
        if self.learner.learn(held):
            self._joined_anew()
        polled.newest = [-math.inf] * len(self.rank_map)
        for key, answer in held.items():
            self._join_answer(polled, key, answer)

    def _join_answer(self, polled: Polled, key: str, answer: Vector) -> None:
        kind, _, name = key.partition(":")
        if key == RECORDED_KEY:
            recorded = prom_rules.recorded_ids(labels.get("__name__", "") for labels, _
                                               in answer.pairs())
            if recorded != self._recorded:
                self._recorded, self._requery = recorded, True
        elif kind == "job":
            polled.job[name] = prom_join.scalar(answer)
        elif kind == "metric":
            metric = self.settings.metrics[name]
            ways: dict[str, int] = {}
            found = None
            if answer:
                found, ways = prom_join.per_rank(answer, len(metric.queries) > 1,
                                                 len(self.rank_map), self.learner.join.rank_of)
                polled.shows[name] = prom_join.ways_shown(metric.queries, ways)
            found = self.counters.values(name, found, polled.values.get(PROBE_METRIC))
            if found is not None:
                polled.values[name] = found
            if len(metric.queries) > 1:
                self._note_ways(name, ways)

    def _note_ways(self, metric_id: str, ways: dict[str, int]) -> None:
        """Ask a metric of several ways only the way that answered, once it alone did; ask
        every way again as soon as fewer GPUs answer it (none, or some have gone quiet on
        it and may answer another way)."""
        answered = sum(ways.values())
        if metric_id in self._ways:
            if answered < self._way_gpus[metric_id]:
                del self._ways[metric_id], self._way_gpus[metric_id]
                self._requery = True
        elif len(ways) == 1 and next(iter(ways)).isdecimal():
            self._ways[metric_id] = int(next(iter(ways)))
            self._way_gpus[metric_id] = answered
            self._requery = True

    def _summarise_failures(self, polled: Polled, budget: ByteBudget) -> None:
        self.retry_after = max((f.retry_after for f in polled.failures
                                if f.retry_after is not None), default=None)
        if budget.spent:  # said first, in place of the answers that spent it
            polled.failures = [f for f in polled.failures if f.kind != TOO_LARGE]
            polled.failures.insert(0, QueryError(
                TOO_LARGE, f"this poll's answers passed {budget.limit // 1_000_000} MB; "
                           f"{polled.not_sent} more queries not sent"))

    # -- querying ----------------------------------------------------------------------

    @property
    def recorded(self) -> frozenset[str]:
        """The metrics Prometheus records by rank (prom_rules), as the last poll found."""
        return self._recorded

    def queries(self) -> dict[str, str]:
        """Every query of the poll under way (else the next one), by what it is for."""
        return dict(self._sending)

    def _make_queries(self) -> dict[str, str]:
        """Each answer carries only the labels that place its series on a rank (and, for the
        two the rank map is learned from, the labels it is learned from)."""
        joined = (self.rank_settings.rank_label, *self._join_labels())
        metrics = {
            f"metric:{m.id}": promql.keep(
                self._metric_expression(m),
                (*joined, *self.learner.learned_from(m.id),
                 promql.WAY_LABEL if len(m.queries) > 1 else ""))
            for m in self.settings.metrics.values() if m.queries
        }
        jobs = {f"job:{k}": promql.fill(q, self._dcgm, self._job)
                for k, q in self.settings.job_metrics.items()}
        first = {key: metrics.pop(key) for key in RANK_KEYS if key in metrics}
        fresh = {f"metric:{STEP_METRIC}": (self.rank_settings.step_metric, self._job),
                 f"metric:{PROBE_METRIC}": (promql.DCGM_PROBE_METRICS, self._dcgm)}
        for key, (name, series) in fresh.items():
            if key in first:
                first[key] = promql.with_freshness(first[key], name, series, joined,
                                                   self.rank_settings.stale_after_seconds)
        # which metrics Prometheus records by rank (prom_rules): a count per name, tiny
        recorded = {RECORDED_KEY: prom_rules.recorded_query(self._job)}
        return {**first, **metrics, **jobs, **recorded}

    def _join_labels(self) -> tuple[str, ...]:
        """The labels DCGM's answers carry for the join: the learned join's, or, before any
        rank is known, those the source was told to expect (``expected_join``)."""
        if self.expected_join is not None and not self.rank_map.ranks:
            return self.expected_join
        return self.learner.join.labels

    def _metric_expression(self, metric) -> str:
        """The metric's series as Prometheus records them by rank (prom_rules) where it
        does, else as the configuration reads them."""
        if metric.id in self._recorded and f"metric:{metric.id}" not in RANK_KEYS:
            return f"{prom_rules.recorded_name(metric.id)}{self._job}"
        return promql.metric_query(metric.queries, self._dcgm, self._job,
                                   self._ways.get(metric.id))

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
            found[metric_id] = [Point(t, clean(v), typical.get(t, MISSING)) for t, v in mine]
        return found

    def lookback(self, job_values: Sequence[str], seconds: float, step: float,
                 until: float | None = None) -> Lookback:
        """The job's values over the ``seconds`` before ``until`` (None: now; range
        queries), when each rank's step series last had a sample within ``SEEN_SECONDS``
        before it, and the error counters over the ledger's window before it (blocking;
        QueryError)."""
        now = self.clock() if until is None else until
        job = {}
        for name in job_values:
            query = self.settings.job_metrics.get(name)
            if query:
                points = self._first_series(promql.fill(query, self._dcgm, self._job),
                                            now - seconds, now, step)
                job[name] = [(t, v) for t, v in points if not math.isnan(clean(v))]
        return Lookback(job, self._last_seen(until), SEEN_STEP, self._counters_before(now),
                        now - LEDGER_WINDOW_SECONDS)

    def _counters_before(self, now: float) -> dict[str, list[float]]:
        """Each error counter's lowest value per rank over the ledger's window before
        ``now``: where it stood before any rise in it (a counter whose query fails is left
        out: not known, not 0)."""
        found = {}
        window = f"[{LEDGER_WINDOW_SECONDS:.0f}s:{COUNTER_STEP_SECONDS:.0f}s]"
        for counter in LEDGER_COUNTERS:
            expression = self._queries.get(f"metric:{counter.metric}")
            if expression is None:
                continue
            try:
                answer = self.reader.query(f"min_over_time(({expression}){window})", at=now)
            except QueryError:
                continue
            if answer:
                found[counter.metric], _ = prom_join.per_rank(
                    answer, False, len(self.rank_map), self.learner.join.rank_of)
        return found

    def _last_seen(self, until: float | None) -> dict[int, float]:
        """Each rank's newest step sample within SEEN_SECONDS before ``until`` (None: now),
        by the job's rank label."""
        label = promql.label_name(self.rank_settings.rank_label)
        answer = self.reader.query(f"max by ({label}) ({self._newest_step()})", at=until)
        found: dict[int, float] = {}
        for labels, when in answer.pairs():
            rank = ranks.rank_number(labels.get(self.rank_settings.rank_label, ""))
            if rank is not None and rank < len(self.rank_map):
                found[rank] = when
        return found

    def series_end(self) -> float | None:
        """The newest step sample of any rank: one query over SEEN_SECONDS; where it finds
        none, ever closer looks (``END_LOOKS``) for the last stretch with samples, then the
        first query at its end. The coarse looks read rank 0's series alone (a whole job's
        would be every sample of every rank, past a backend's sample limit at 16k ranks),
        and all ranks' only where rank 0 has none; asked only of a job not seen for
        SEEN_SECONDS."""
        newest = self._one_time(f"max({self._newest_step()})")
        if newest is not None:
            return newest
        metric = promql.metric_name(self.rank_settings.step_metric)
        labels = promql.job_labels(self.rank_settings.job_label, self.prom.job)
        for one in (promql.selector({**labels, self.rank_settings.rank_label: "0"}), self._job):
            stretch = self._last_stretch(f"{metric}{one}")
            if stretch is not None:
                return self._one_time(f"max({self._newest_step()})", at=stretch)
        return None

    def _last_stretch(self, series: str) -> float | None:
        """The end of the last ``END_LOOKS`` stretch in which ``series`` had samples."""
        stretch = self.clock() + END_LOOKS[0][1]  # the first look's last range ends after now
        for window, step in END_LOOKS:  # ranges of ``step`` tile the window: none missed
            stretch = self._one_time(
                f"max_over_time(timestamp(max(count_over_time({series}[{step:.0f}s])))"
                f"[{window:.0f}s:{step:.0f}s])", at=stretch)
            if stretch is None:
                return None
        return stretch

    def _one_time(self, expression: str, at: float | None = None) -> float | None:
        answer = self.reader.query(expression, at=at)
        return max((when for _, when in answer.pairs() if math.isfinite(when)), default=None)

    def _newest_step(self) -> str:
        """Each step series' newest sample time within SEEN_SECONDS, looked for every
        SEEN_STEP seconds (a series that ended between two looks is dated by the first)."""
        newest = promql.freshness_query(self.rank_settings.step_metric, self._job)
        return f"max_over_time({newest}[{SEEN_SECONDS:.0f}s:{SEEN_STEP:.0f}s])"

    def frames_at(self, times: Sequence[float]) -> Iterator[tuple[Frame, RankMap]]:
        """The frame a poll would have given at each of ``times`` (oldest first), read from
        the backend's history by a copy of this source (prom_past): this one is untouched."""
        return prom_past.past_frames(self._past_copy, self.client, times,
                                     len(self.rank_map), self.clock(), self.ranges,
                                     self.settings.refresh_seconds)

    def forget_past(self) -> None:
        self.ranges.let_go()  # at 16,384 ranks up to HELD_BYTES of them

    def past_said(self) -> tuple[str, ...]:
        return self.ranges.take_said()

    def _past_copy(self, client: prom_past.RangeClient) -> PrometheusSource:
        """A source reading the job as this one does now (the settings its finds gave),
        through ``client`` and on its clock, learning the ranks afresh. Where this one knows
        the job's own ranks, a moment without the job's series has none: its GPUs are not
        guessed from DCGM, whose GPUs then may be another job's."""
        copy = PrometheusSource(self.settings, self.client, client.now)
        copy.reader = client
        copy.live = False  # the scrape's state now says nothing of then
        copy.counters = SlowCounters(full_every=1)  # one form of each query: windows shared
        if self.rank_map.ranks:
            copy.expected_join, copy._recorded = self.learner.join.labels, self._recorded
            # the ways that answer now: a copy's first moment asks its queries in the form
            # the others do, and shares their windows instead of reading its own
            copy._ways, copy._way_gpus = dict(self._ways), dict(self._way_gpus)
            copy._queries = copy._sending = copy._make_queries()
        copy.learner.may_guess = not self.rank_map.ranks or ranks.is_guessed(self.rank_map)
        copy.name, copy.job_name, copy.configured = self.name, self.job_name, self.configured
        copy.finder = prom_past.PastFinder(self.client, client.now)
        copy.finder.shows = dict(self.finder.shows)
        return copy

    def _rank_query(self, metric, rank: int) -> str:
        """The metric's query narrowed to one rank's GPU and the job's series of that rank,
        by its host and pod as their labels hold them (not as the screen shows them)."""
        rs = self.rank_settings
        job = {**promql.job_labels(rs.job_label, self.prom.job), rs.rank_label: str(rank)}
        return promql.rank_query(metric.queries, self.held(self.rank_map.ranks[rank]),
                                 self.prom.dcgm_selector, job)

    def held(self, rank: Rank) -> Rank:
        """``rank`` with its host and pod as their labels hold them (prom_ranks)."""
        return self.learner.held(rank)

    def tenants(self, nodes: Sequence[str]) -> dict[str, NodeTenants]:
        """Who else has GPUs on ``nodes``: one query (prom_tenants; blocking)."""
        return prom_tenants.tenants(self.client, nodes, self.rank_map, self.prom.dcgm_selector,
                                    self.learner.originals)

    def _first_series(self, expression: str, start: float, end: float, step: float
                      ) -> list[tuple[float, float]]:
        series = self.client.query_range(expression, start, end, step)
        return series[0].points if series else []

    # -- the frame ---------------------------------------------------------------------

    def _frame(self, polled: Polled, now: float) -> Frame:
        values, shows = polled.values, polled.shows
        for metric in self.settings.metrics.values():
            key = f"metric:{metric.id}"
            last = self._last.values if self._last is not None else {}
            if key not in polled.answered and metric.id in last:
                values[metric.id] = list(last[metric.id])  # its query failed: kept
        for metric_id, found in self.finder.shows.items():
            if metric_id in values and not shows.get(metric_id):
                shows[metric_id] = found
        unanswered = frozenset(m.id for m in self.settings.metrics.values()
                               if m.queries and f"metric:{m.id}" not in polled.answered)
        frame = Frame(time=now, values=values, job=polled.job, stale=self._stale(polled),
                      shows={k: v for k, v in shows.items() if v},
                      absent=self.finder.notes(self.settings, values), unanswered=unanswered)
        return replace(frame, unknown=_not_answered(frame, polled, len(self.rank_map)))

    @staticmethod
    def _stale(polled: Polled) -> frozenset[int]:
        """The ranks Prometheus found stale, by its own clock (promql.with_freshness)."""
        return frozenset(r for r, t in enumerate(polled.newest) if t > -math.inf)


def _not_answered(frame: Frame, polled: Polled, n_ranks: int) -> frozenset[int]:
    """The ranks a partial answer held none of: not known this poll (a shard or a store
    that holds them did not answer), rather than gone."""
    if not polled.partial:
        return frozenset()
    return frozenset(rank for rank, up in enumerate(frame.ranks_up(n_ranks)) if not up)


def _gives_up(error: QueryError) -> bool:
    return error.kind in GIVE_UP_KINDS

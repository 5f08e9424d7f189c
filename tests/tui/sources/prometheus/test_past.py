"""Past moments from the Prometheus source (prom_past): each frame is what a live poll gave at
that moment, read from range queries a chunk of moments at a time; the live source is left
as it was."""

from __future__ import annotations

import dataclasses
import math
import random
import re
from collections.abc import Callable

import pytest
from ranktop.tui.core.analysis import Analyser
from ranktop.tui.engine.replay import Replay
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import past as prom_past
from ranktop.tui.sources.prometheus.client import QueryError, Sample, Series, Vector
from ranktop.tui.sources.prometheus.past import (
    RangeCache,
    RangeClient,
    Window,
    runs,
    window_of,
    window_steps,
)
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.tui.sources.prometheus.test_source import (
    NOW,
    ScriptedClient,
    as_vector,
    dcgm,
    job,
    newest,
    stale,
)

STEP = 2.0
BEGAN = NOW - 20  # the backend holds nothing before


def history(moment: float) -> dict[str, list[Sample]]:
    """What the backend answers at ``moment``: values that move with time, rank 2 stale from
    NOW + 4 on, nothing before BEGAN."""
    if moment < BEGAN:
        return {}
    k = moment - NOW
    temperature = [*(dcgm(r, 60.0 + r + k) for r in range(4)), newest(moment - 1)]
    if k >= 4:
        temperature.append(stale(2, moment - 40))
    return {
        "metric:temperature": temperature,
        "metric:sm_active": [dcgm(r, 88.0 - k, ranktop_way="0") for r in range(4)],
        "metric:step_time": [job(r, 1.1 + k / 100) for r in range(4)],
        "metric:compute_time": [job(r, 0.8 + r / 10) for r in range(4)],
        "job:step": [Sample({}, 1234.0 + k, moment)],
    }


class HistoryClient:
    """A backend with a history: an instant query is answered at ``now`` (or ``at``), a
    range query at each of its steps, from ``script``. Queries are known by the key the
    sources in ``references`` send them under. ``shift`` moves a range's answers off the
    grid asked for, as VictoriaMetrics may."""

    backend = ""

    def __init__(self, script: Callable[[float], dict[str, list[Sample]]]) -> None:
        self.script = script
        self.now = NOW
        self.references: list[PrometheusSource] = []
        self.ranged: list[tuple[str, float, float, float]] = []
        self.instants: list[float | None] = []
        self.shift = 0.0
        self.doubled = False  # each range answer's samples twice

    def _key(self, expression: str) -> str:
        """The key of the query ``expression`` asks, whatever labels it keeps."""
        asked = _unlabelled(expression)
        for source in self.references:
            for key, sent in source._make_queries().items():
                if asked in (_unlabelled(sent), _unlabelled(f"{sent} > 0")):
                    return key
        return expression

    def query(self, expression: str, budget: object = None, at: float | None = None
              ) -> Vector:
        self.instants.append(at)
        moment = self.now if at is None else round(at * 1000) / 1000  # as the backend reads it
        return as_vector(self.script(moment).get(self._key(expression), []))

    def query_range(self, expression: str, start: float, end: float, step: float,
                    budget: object = None) -> list[Series]:
        self.ranged.append((expression, start, end, step))
        key = self._key(expression)
        found: dict[tuple, Series] = {}
        # as Prometheus reads the times sent (to the millisecond, client._seconds) and steps
        # through them: in whole milliseconds
        first, every, last = (round(t * 1000) for t in (start, step, end))
        for i in range((last - first) // every + 1):
            moment = (first + i * every) / 1000
            for sample in self.script(moment).get(key, []):
                labels = tuple(sample.labels.items())
                series = found.setdefault(labels, Series(dict(labels), []))
                series.points.append((moment + self.shift, sample.value))
                if self.doubled:
                    series.points.append((moment + self.shift, sample.value))
        return list(found.values())

    def metric_names(self, since: float) -> list[str]:
        return []

    def label_names(self, metric: str, since: float) -> list[str]:
        return []


def _unlabelled(expression: str) -> str:
    return re.sub(r"by \([^)]*\)", "by ()", expression)


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return load_settings(overrides={"prometheus": {"url": "http://prom:9090", "job": "j"}},
                         environ={})


@pytest.fixture
def client(settings):
    made = HistoryClient(history)
    made.references.append(PrometheusSource(settings, client=made))  # the first queries
    watching(settings, made).poll_now()  # and those sent once the ranks are learned
    return made


def watching(settings, client: HistoryClient) -> PrometheusSource:
    """A live source on the client's clock, known to it."""
    source = PrometheusSource(settings, client=client, clock=lambda: client.now)
    client.references.append(source)
    return source


def live_frames(settings, client: HistoryClient, times: list[float]) -> list:
    """The frames a console watching at each of ``times`` polled."""
    source = watching(settings, client)
    frames = []
    for moment in times:
        client.now = moment
        frames.append(source.poll_now())
    return frames


def read_later(settings, client: HistoryClient, times: list[float]) -> tuple[list, object]:
    """The past frames at ``times`` as a source started 100 s after NOW reads them, and
    that source."""
    client.now = NOW + 100
    source = watching(settings, client)
    source.poll_now()
    return list(source.frames_at(times)), source


def same(past, live) -> None:
    assert past.time == live.time
    assert past.job.keys() == live.job.keys() and all(
        past.job[k] == live.job[k] or (math.isnan(past.job[k]) and math.isnan(live.job[k]))
        for k in live.job)
    assert past.stale == live.stale and past.shows == live.shows
    assert past.values.keys() == live.values.keys()
    for metric, values in live.values.items():
        assert [v if not math.isnan(v) else None for v in past.values[metric]] == [
            v if not math.isnan(v) else None for v in values], metric


def test_a_past_frame_is_what_a_live_poll_gave_at_that_moment(settings, client):
    times = [NOW + i * STEP for i in range(5)]
    live = live_frames(settings, client, times)
    past, source = read_later(settings, client, times)
    assert [frame.time for frame, _ in past] == times
    for (frame, rank_map), polled in zip(past, live, strict=True):
        same(frame, polled)
        assert rank_map == source.rank_map
    assert past[-1][0].stale == frozenset({2})  # the freshness marks of that moment
    assert past[0][0].values["temperature"][3] == 63.0 and past[0][0].job["step"] == 1234.0


def test_the_live_source_is_left_as_it_was(settings, client):
    source = watching(settings, client)
    source.poll_now()
    before = (source.queries(), source.status(), source.rank_map, source.settings,
              source.counters._polls, source._last, source.finder.why)
    assert len(list(source.frames_at([NOW - 10 + i * STEP for i in range(4)]))) == 4
    assert before == (source.queries(), source.status(), source.rank_map, source.settings,
                      source.counters._polls, source._last, source.finder.why)


def test_moments_older_than_the_backend_holds_give_no_frame(settings, client):
    source = watching(settings, client)
    times = [BEGAN - 4, BEGAN - 2, BEGAN, BEGAN + 2]
    assert [frame.time for frame, _ in source.frames_at(times)] == [BEGAN, BEGAN + 2]


def test_each_query_is_a_range_query_over_aligned_windows_kept(settings, client, monkeypatch):
    source = watching(settings, client)
    times = [NOW + i * STEP for i in range(9)]
    monkeypatch.setattr(prom_past, "MAX_WINDOW_STEPS", 4)
    client.now = NOW + 100
    source.poll_now()  # the ranks are known: windows from the first moment on
    client.instants.clear()
    list(source.frames_at(times))
    span = 4 * STEP  # windows start on multiples of their length: neighbours share them
    assert {start % span for _, start, _, _ in client.ranged} == {0.0}
    assert all(step == STEP and end - start == 3 * STEP for _, start, end, step in client.ranged)
    assert {start for _, start, _, _ in client.ranged} == {NOW, NOW + 8, NOW + 16}
    # one range query per query and window (and one more where the copy narrowed a query
    # after its first moment), never one per moment, and no instant query
    assert len(client.ranged) <= 3 * len(source.queries()) + 1 and client.instants == []
    asked = len(client.ranged)
    list(source.frames_at(times[3:7]))  # a replay of moments in between: all kept
    assert len(client.ranged) == asked and client.instants == []


def test_victoria_metrics_recent_moments_are_instant_queries_at_their_time(settings, client):
    times = [NOW + i * STEP for i in range(4)]
    live = live_frames(settings, client, times)
    client.backend = "VictoriaMetrics"  # it leaves its newest points out of a range
    client.now = NOW + 6 + prom_past.VICTORIA_RECENT_SECONDS - 3  # the last two are recent
    source = watching(settings, client)
    source.poll_now()
    client.ranged.clear()
    client.instants.clear()
    for (frame, _), polled in zip(source.frames_at(times), live, strict=True):
        same(frame, polled)
    assert {start for _, start, _, _ in client.ranged} <= {NOW, NOW + 2}
    assert {end for _, _, end, _ in client.ranged} == {NOW + 2}
    assert {NOW + 4, NOW + 6} <= set(client.instants) and NOW not in client.instants


def test_a_window_holds_fewer_moments_the_more_ranks_there_are():
    assert window_steps(512, 25) == window_steps(4096, 25) == prom_past.MAX_WINDOW_STEPS
    assert 2 <= window_steps(8192, 25) < prom_past.MAX_WINDOW_STEPS
    # every query's series held for two moments would pass the bound: one at a time
    assert window_steps(16_384, 25) == window_steps(1_000_000, 25) == 1
    # Prometheus refuses a range of more than 11,000 points
    assert prom_past.MAX_WINDOW_STEPS <= 11_000


def test_runs_are_evenly_spaced():
    ledger = [0.0, 60.0, 120.0]
    grid = [130.0, 132.0, 134.0, 136.0, 138.0]
    assert list(runs(ledger + grid)) == [ledger, grid]
    assert list(runs([5.0])) == [[5.0]]
    assert list(runs([1.0, 2.0, 4.0, 8.0])) == [[1.0, 2.0], [4.0, 8.0]]
    assert list(runs([1.0, 1.0, 1.0])) == [[1.0], [1.0], [1.0]]  # no step of 0


def test_windows_are_aligned_on_the_moments_grid():
    assert window_of(1_000.0, 2.0, 30) == Window(960.0, 2.0, 30)
    assert window_of(1_019.0, 2.0, 30) == Window(961.0, 2.0, 30)  # a grid through 1 s
    assert window_of(1_020.0, 60.0, 10) == Window(600.0, 60.0, 10)
    assert window_of(1_018.0, 2.0, 30).end == 1_018.0


def test_a_window_holds_the_moment_it_is_for_to_the_millisecond():
    # Moments polled live are not on any grid: their window, reckoned in the milliseconds
    # the backend answers in, holds each of them, whatever the step between them.
    rng = random.Random(5)
    for _ in range(2000):
        moment, step = 1.8e9 + rng.uniform(0, 1e4), rng.choice([rng.uniform(0.1, 5), 2.0])
        window = window_of(moment, step, 30)
        assert round(moment * 1000) in {round(t * 1000) for t in window.moments()}


def test_moments_off_any_grid_each_give_their_frame(settings, client):
    # Three moments as a console polling live stamps them (to the microsecond, 0.242 s then
    # 0.197 s apart): the two evenly spaced are read from one window, whose step the
    # backend takes to the millisecond; each moment gives its frame. (Reckoned to the
    # microsecond, their window held each of the first two a millisecond away from it: an
    # empty frame, dropped.)
    first = NOW + 0.0915848
    times = [first, first + 0.242001, first + 0.242001 + 0.197]
    # what an instant query at each moment reads: the backend takes it to the millisecond
    live = live_frames(settings, client, [round(t * 1000) / 1000 for t in times])
    past, _ = read_later(settings, client, times)
    assert [frame.time for frame, _ in past] == times
    for (frame, _), polled in zip(past, live, strict=True):
        same(dataclasses.replace(frame, time=polled.time), polled)


def test_a_source_that_knows_no_ranks_yet_learns_them_from_one_moment(settings, client):
    source = PrometheusSource(settings, client=client, clock=lambda: NOW + 100)
    client.ranged.clear()
    client.instants.clear()
    assert len(list(source.frames_at([NOW + i * STEP for i in range(6)]))) == 6
    assert set(client.instants) == {NOW}  # a lone moment first: the ranks from it
    # then the windows that hold the other moments
    assert {(start, end) for _, start, end, _ in client.ranged} == {(NOW, NOW + 58)}


def test_answers_off_the_grid_asked_are_read_at_the_moment_itself(settings, client):
    times = [NOW + i * STEP for i in range(3)]
    live = live_frames(settings, client, times)
    client.shift = 0.5  # VictoriaMetrics moved the range's start onto its own grid
    source = watching(settings, client)
    past = [frame for frame, _ in source.frames_at(times)]
    for frame, polled in zip(past, live, strict=True):
        same(frame, polled)
    assert set(client.instants) >= set(times)


def test_the_windows_kept_are_bounded_the_least_recently_used_let_go_first():
    backend = HistoryClient(lambda moment: {q: [Sample({"x": q}, moment, moment)]
                                            for q in "abc"})
    # room for two windows of three moments, each a series
    cache = RangeCache(held_bytes=2 * (prom_past.SERIES_BYTES + 3 * prom_past.VALUE_BYTES))
    ranged = past_client(backend, cache, steps=3)
    ranged.at(12.0)
    for query in "abc":
        assert [s.value for s in ranged.query(query)] == [12.0]
    assert len(cache) == 2 and len(backend.ranged) == 3
    ranged.at(14.0)
    assert [s.value for s in ranged.query("c")] == [14.0]  # kept: asked for nothing
    assert len(backend.ranged) == 3
    assert [s.value for s in ranged.query("a")] == [14.0]  # let go: asked again
    assert [(q, start, end) for q, start, end, _ in backend.ranged] == [
        ("a", 12.0, 16.0), ("b", 12.0, 16.0), ("c", 12.0, 16.0), ("a", 12.0, 16.0)]


def past_client(backend, cache: RangeCache, steps: int) -> RangeClient:
    """A client answering from windows of ``steps`` moments 2 s apart, kept in ``cache``."""
    ranged = RangeClient(backend, cache=cache)
    ranged.step, ranged.steps = 2.0, lambda: steps
    return ranged


def test_a_lookback_until_a_moment_ends_there(settings, monkeypatch):
    client = ScriptedClient()
    source = PrometheusSource(settings, client=client, clock=lambda: NOW)
    client.source = source
    asked: list[float | None] = []
    answer = client.query

    def query(expression: str, budget: object = None, at: float | None = None) -> Vector:
        asked.append(at)
        return answer(expression, budget)

    monkeypatch.setattr(client, "query", query)
    found = source.lookback(["loss"], 4.0, 2.0, until=NOW - 600)
    assert found.job["loss"] == [(NOW - 604, 70.0), (NOW - 602, 71.0), (NOW - 600, 72.0)]
    # the ranks seen and the error counters before that moment, not before now
    assert asked and set(asked) == {NOW - 600}


def test_a_series_without_a_sample_at_a_moment_is_not_in_that_moments_answer():
    def script(moment: float) -> dict[str, list[Sample]]:
        gone = moment == 14.0  # rank 2's series has a gap
        return {"a": [Sample({"rank": str(r)}, moment + r, moment) for r in (1, 2)
                      if not (gone and r == 2)]}

    ranged = past_client(HistoryClient(script), RangeCache(), steps=3)
    for moment, wanted in ((12.0, {"1": 13.0, "2": 14.0}), (14.0, {"1": 15.0}),
                           (16.0, {"1": 17.0, "2": 18.0})):
        ranged.at(moment)
        answer = ranged.query("a")
        assert {s.labels["rank"]: s.value for s in answer} == wanted
        assert {s.time for s in answer} == {moment}


class DoubtfulRanges:
    """A backend whose range answers are ``series``; its instant answers are the truth."""

    backend = ""

    def __init__(self, series: list[Series]) -> None:
        self.series = series
        self.instants: list[float | None] = []

    def query(self, expression: str, budget: object = None, at: float | None = None
              ) -> Vector:
        self.instants.append(at)
        return as_vector([Sample({"rank": "0"}, 1.0, at or 0.0)])

    def query_range(self, expression: str, start: float, end: float, step: float,
                    budget: object = None) -> list[Series]:
        return self.series


@pytest.mark.parametrize(("series", "doubt"), [
    ([Series({"rank": "0"}, [(12.0, 5.0), (12.0, 9.0), (14.0, 5.0)])], "samples twice"),
    ([Series({"rank": "0"}, [(14.0, 9.0), (12.0, 5.0)])], "samples out of order"),
    ([Series({"rank": "0"}, [(12.0, 5.0)]), Series({"rank": "0"}, [(12.0, 9.0)])],
     "series twice"),
])
def test_doubtful_range_answers_are_said_and_read_moment_by_moment(series, doubt):
    backend = DoubtfulRanges(series)
    cache = RangeCache()
    ranged = past_client(backend, cache, steps=3)
    for moment in (12.0, 14.0):
        ranged.at(moment)
        assert [(s.value, s.time) for s in ranged.query("a")] == [(1.0, moment)]
    assert backend.instants == [12.0, 14.0]  # never a value from the doubtful answer
    assert cache.take_said() == (f"{doubt} in the backend's answers: read moment by moment",)
    assert cache.take_said() == ()  # said once


LATE = NOW + 3600.0  # a console started an hour into the job's history


@pytest.fixture
def late(settings):
    """A live source an hour into the job, polled: what replays read through."""
    made = HistoryClient(lambda moment: history(NOW) if moment > NOW else history(moment))
    made.references.append(PrometheusSource(settings, client=made))
    made.now = LATE
    source = watching(settings, made)
    source.poll_now()
    made.ranged.clear()
    return source


def fresh(settings) -> Callable:
    return lambda triage: Analyser(settings, "j", None, triage)


def test_a_late_starts_catch_up_asks_at_most_four_range_queries_per_query(settings, late):
    Replay(settings, late).bring(fresh(settings), LATE - STEP)
    # the ledger's minutes, the detectors' window, the lookback: 175 before windows
    # were aligned and kept, and the queries settled from the first moment
    assert len(late.client.ranged) <= 4 * len(late.queries())


def test_a_step_to_a_moment_whose_frames_are_gone_shares_the_windows_kept(settings, late):
    Replay(settings, late).at(LATE - 60)
    asked = len(late.client.ranged)
    Replay(settings, late).at(LATE - 62)  # nothing of the first replay's kept but windows
    assert len(late.client.ranged) - asked <= len(late.queries())  # 175 before


def test_a_replayed_moment_says_what_made_the_backends_answers_doubtful(settings, late):
    late.client.doubled = True
    status = Replay(settings, late).at(LATE - 60).status
    assert "samples twice in the backend's answers: read moment by moment" in status.message


def test_the_windows_kept_are_let_go_once_no_replay_asked_for_one_a_while():
    backend = HistoryClient(lambda moment: {"a": [Sample({"x": "1"}, moment, moment)]})
    now = [0.0]
    cache = RangeCache(clock=lambda: now[0])
    ranged = past_client(backend, cache, steps=3)
    ranged.at(12.0)
    ranged.query("a")
    now[0] = prom_past.KEPT_IDLE_SECONDS
    cache.let_go_if_idle()
    assert len(cache) == 1  # still in use
    now[0] += 1.0
    cache.let_go_if_idle()
    assert len(cache) == 0


def test_once_a_range_query_fails_moments_are_read_alone_until_the_windows_are_let_go():
    class Refusing(DoubtfulRanges):
        def query_range(self, *args, **kwargs) -> list[Series]:
            raise QueryError("too large", "answers past 512 MB")

    backend = Refusing([])
    now = [0.0]
    cache = RangeCache(clock=lambda: now[0])
    ranged = past_client(backend, cache, steps=3)
    ranged.at(12.0)
    with pytest.raises(QueryError):
        ranged.query("a")
    ranged.at(14.0)
    assert [s.time for s in ranged.query("b")] == [14.0] and backend.instants == [14.0]
    now[0] = prom_past.KEPT_IDLE_SECONDS + 1
    cache.let_go_if_idle()
    with pytest.raises(QueryError):  # asked as a range again
        ranged.query("b")


def test_a_moment_in_the_newest_window_read_before_is_not_read_again_once_now_moved_on():
    """The newest window is cut where now was; a step read later cuts it further on, and
    a moment the window read before holds is answered from it (a scrub near now)."""
    backend = HistoryClient(lambda moment: {"a": [Sample({"x": "1"}, moment, moment)]})
    cache = RangeCache()
    first = past_client(backend, cache, steps=8)
    first.recent_after = 18.0  # the window 16..30 held up to 18
    first.at(18.0)
    assert [s.value for s in first.query("a")] == [18.0]
    later = past_client(backend, cache, steps=8)
    later.recent_after = 22.0  # now moved on: the same window, cut further
    later.at(16.0)
    assert [s.value for s in later.query("a")] == [16.0]
    assert [(start, end) for _, start, end, _ in backend.ranged] == [(16.0, 18.0)]
    later.at(22.0)  # past what was held: read (the longer cut) once
    assert [s.value for s in later.query("a")] == [22.0]
    assert [(start, end) for _, start, end, _ in backend.ranged] == [(16.0, 18.0),
                                                                       (16.0, 22.0)]


def test_a_past_reads_first_moment_asks_the_queries_its_later_moments_do(settings, client):
    source = watching(settings, client)
    client.now = NOW + 100
    source.poll_now()
    source.poll_now()  # sm_active answers one way only: asked that way alone from now on
    asked = set(source.queries().values())
    client.ranged.clear()
    list(source.frames_at([NOW + i * STEP for i in range(3)]))
    assert client.ranged and {expression for expression, *_ in client.ranged} <= asked


def test_the_windows_kept_are_let_go_once_a_catch_up_is_done_with_them(settings, client):
    source = watching(settings, client)
    client.now = NOW + 100
    source.poll_now()
    list(source.frames_at([NOW + i * STEP for i in range(3)]))
    assert len(source.ranges) > 0
    source.forget_past()
    assert len(source.ranges) == 0

"""Past moments against a real Prometheus and a real VictoriaMetrics: the frames read back
from the backend's history are the frames a live poll read then, and `ranktop report --at`
says what the live report said at that moment."""

from __future__ import annotations

import json
import math
import time
import urllib.parse
import urllib.request

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.cli.main import main
from ranktop.tui.core import ranks
from ranktop.tui.core.model import Frame
from ranktop.tui.core.moment import aligned, shown_zoned
from ranktop.tui.sources.prometheus import past as prom_past
from ranktop.tui.sources.prometheus.client import PromClient
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import Prometheus, VictoriaMetrics, get_json, instant, wait_for
from tests.integration.conftest import JOB_DEATH, JOB_FAULTS
from tests.integration.test_prometheus import settings_for
from tests.tui.conftest import screen_text

WANTED = 3  # live polls whose moments are read back
DEAD = 455  # the death scenario's rank, dead all along
RANGED_BACK = 12.0  # seconds: past what the test's VictoriaMetrics hides (8 s)
RANGED_MOMENTS = 8


def scrapes(server: Prometheus, port: int) -> list[tuple[float, float]]:
    """When the backend scraped the simulator at ``port`` in the last ten minutes (longer
    than the test polls, however slow the machine: a poll whose scrapes had left the list
    would look overlapped by none): each scrape's start and end."""
    query = urllib.parse.urlencode({
        "query": f'scrape_duration_seconds{{instance="127.0.0.1:{port}"}}[10m]',
        "nocache": "1", "latency_offset": "1s"})
    result = get_json(f"{server.url}/api/v1/query?{query}")["data"]["result"]
    return [(float(t), float(t) + float(took)) for series in result
            for t, took in series["values"]]


class InstantQueries:
    """How many instant queries a source's client sent."""

    def __init__(self, source: PrometheusSource) -> None:
        self.sent = 0
        self._query = source.client.query
        source.client.query = self.query

    def query(self, *args, **kwargs):
        self.sent += 1
        return self._query(*args, **kwargs)


def flush(server: Prometheus) -> None:
    """What VictoriaMetrics ingested made searchable now (else up to a second later)."""
    if isinstance(server, VictoriaMetrics):
        urllib.request.urlopen(f"{server.url}/internal/force_flush", timeout=2).close()


def same_values(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y))
                                    for x, y in zip(a, b, strict=True))


def at_the_moment(settings, moment: float) -> Frame:
    """The frame a live poll gives when every query is evaluated at ``moment``: the instant
    queries of the live path, pinned to that time (a past copy's client without its range
    cache answers by instants only), on a clock that says ``moment``. It looks for no
    metrics where the job's are empty (the past copy does not either)."""
    pinned = prom_past.RangeClient(PromClient(settings.prometheus))
    pinned.at(moment)
    source = PrometheusSource(settings, pinned, pinned.now)
    source.live = False  # the scrape's state now says nothing of then
    source.finder = prom_past.PastFinder(source.client, pinned.now)
    return source.poll_now()


def held(frame: Frame) -> bool:
    """Whether the backend held anything of the job at the frame's moment (a scrape that
    timed out, as one of a loaded machine's may, leaves it none until the next one)."""
    return any(frame.values.values())


def test_past_frames_are_the_frames_polled_live_then(backend, simulators):
    # A past frame (range queries over aligned windows, kept between moments) against the
    # frame the live path reads at the same moment, once the backend holds every sample of
    # it: both read the same samples, whatever the machine's load did to when a scrape was
    # taken in (comparing with what a poll happened to see as it ran is a race with
    # ingestion). A moment the backend held nothing of (its scrape timed out) gives no
    # past frame; the others are polled until WANTED of them are compared.
    settings = settings_for(backend, JOB_FAULTS)
    source = PrometheusSource(settings)
    port = simulators[0].port
    lives: dict[float, Frame] = {}
    deadline = time.monotonic() + 120
    while sum(map(held, lives.values())) < WANTED:
        assert time.monotonic() < deadline, f"the backend held {len(lives)} polled moments"
        moments = []
        for _ in range(WANTED):
            flush(backend)
            moments.append(source.poll_now().time)
        wait_for(lambda last=moments[-1]: max(s for s, _ in scrapes(backend, port)) > last + 1,
                 "a scrape after the last poll")
        flush(backend)
        lives |= {moment: at_the_moment(settings, moment) for moment in moments}
    moments = sorted(lives)
    past = {frame.time: (frame, rank_map) for frame, rank_map in source.frames_at(moments)}
    assert sorted(past) == [moment for moment in moments if held(lives[moment])]
    n = len(source.rank_map)
    for moment, (then, rank_map) in past.items():
        live = lives[moment]
        assert then.time == live.time == moment and rank_map == source.rank_map
        for metric in settings.maps:
            assert same_values(then.values[metric], live.values[metric]), metric
        assert then.stale == live.stale and then.ranks_up(n) == live.ranks_up(n)
        # a job value sums over ranks: VictoriaMetrics may add in another order at a range
        assert then.job.keys() == live.job.keys()
        assert all(math.isclose(then.job[k], live.job[k], rel_tol=1e-9)
                   or (math.isnan(then.job[k]) and math.isnan(live.job[k])) for k in then.job)


def first_scrape(server: Prometheus, port: int) -> float:
    """When the backend first scraped the simulator at ``port`` (within the last hour)."""
    query = urllib.parse.urlencode({"query": f'up{{instance="127.0.0.1:{port}"}}[1h]',
                                    "nocache": "1", "latency_offset": "1s"})
    (series,) = get_json(f"{server.url}/api/v1/query?{query}")["data"]["result"]
    return min(float(t) for t, _ in series["values"])


def test_a_moment_before_the_job_reported_gives_no_frame_of_another_jobs_gpus(
        prometheus, simulators):
    # The two simulated jobs' GPUs share host names; the job scraped second had, for a
    # moment, no series while the other's GPUs already reported. A past frame then must
    # not guess the job's ranks from the other job's GPUs (its rank 455, dead all along,
    # would have been up, and called dead, not never seen, from then on).
    firsts = {job: first_scrape(prometheus, simulator.port)
              for job, simulator in zip((JOB_FAULTS, JOB_DEATH), simulators, strict=True)}
    later = max(firsts, key=firsts.__getitem__)
    between = (min(firsts.values()) + firsts[later]) / 2
    source = PrometheusSource(settings_for(prometheus, later))
    source.poll_now()
    assert len(source.rank_map) == 512
    assert list(source.frames_at([between])) == []
    after = firsts[later] + 0.5
    ((then, rank_map),) = source.frames_at([after])
    assert rank_map.source == source.rank_map.source and any(then.ranks_up(512))
    # A source that knows no ranks yet guesses them from every GPU at first; when the
    # job's own series come, its answers are read as the job's labels join them, not as
    # asked for the guess (by host and GPU index: the other job's GPU of the same name
    # stood for the rank, the dead rank 455 among them).
    fresh = PrometheusSource(settings_for(prometheus, later))
    (_, guessed), (first, learned) = fresh.frames_at([between, after])
    assert ranks.is_guessed(guessed) and learned.source == rank_map.source
    assert first.ranks_up(512) == then.ranks_up(512)
    assert same_values(first.values["temperature"], then.values["temperature"])


def test_a_report_at_a_moment_says_what_the_live_report_said_then(backend, simulators,
                                                                  capsys, monkeypatch):
    monkeypatch.setenv("RANKTOP_LATENCY_OFFSET", "1s")
    # a moment falls on the refresh grid, up to a refresh before the time asked for: the
    # backend must hold the job from before that (run first, this test can come sooner)
    held_since = first_scrape(backend, simulators[1].port)
    refresh = settings_for(backend, JOB_DEATH).refresh_seconds
    wait_for(lambda: time.time() > held_since + 2 * refresh + 1, "a backend older than a refresh")
    source = ["--prometheus", backend.url, "--job", JOB_DEATH, "--json"]
    assert main(["report", *source]) == 1
    live = json.loads(capsys.readouterr().out)
    code = main(["report", *source, "--at", f"{live['time']:.3f}"])
    captured = capsys.readouterr()
    past = json.loads(captured.out)
    assert code == 1 and captured.err == ""
    assert past["live"] is False and live["live"] is True
    assert live["time"] - settings_for(backend, JOB_DEATH).refresh_seconds < past["time"]
    assert past["ranks"] == live["ranks"] and past["ranks"]["missing"] == [DEAD]
    seen = {(a["kind"], a["rank"]) for a in live["anomalies"]}
    assert (seen and seen <= {(a["kind"], a["rank"]) for a in past["anomalies"]})


def test_victoria_metrics_ranges_read_what_its_instant_queries_read(victoria, simulators,
                                                                    monkeypatch):
    settings = settings_for(victoria, JOB_FAULTS)
    source = PrometheusSource(settings)
    source.poll_now()
    held = f'count_over_time(up{{instance="127.0.0.1:{simulators[0].port}"}}[40s])'
    wait_for(lambda: float(instant(victoria.url, held)[0]["value"][1]) >= 30,
             "VictoriaMetrics holding 30 s of the job")
    step = settings.refresh_seconds
    last = (time.time() - RANGED_BACK) // step * step
    moments = [last - i * step for i in range(RANGED_MOMENTS - 1, -1, -1)]
    monkeypatch.setattr(prom_past, "VICTORIA_RECENT_SECONDS", RANGED_BACK - 2)
    instant_queries = InstantQueries(source)
    ranged = list(source.frames_at(moments))
    # read from range queries: instant ones only for the first moment (the ranks) and
    # where a query was first sent at the last one
    assert instant_queries.sent < 3 * len(source.queries())
    monkeypatch.setattr(prom_past, "VICTORIA_RECENT_SECONDS", math.inf)  # instants only
    instants = list(source.frames_at(moments))
    assert [f.time for f, _ in ranged] == [f.time for f, _ in instants] == moments
    for (frame, _), (asked, _) in zip(ranged, instants, strict=True):
        for metric in settings.maps:
            assert same_values(frame.values[metric], asked.values[metric]), metric
        assert frame.stale == asked.stale and frame.job.keys() == asked.job.keys()
        # VictoriaMetrics' ranges and instants may sum a job value in another order
        assert all(math.isclose(frame.job[k], asked.job[k], rel_tol=1e-9) for k in frame.job)


async def test_the_console_opened_at_a_moment_shows_its_dead_rank_and_says_it_is_past(
        backend, monkeypatch):
    settings = settings_for(backend, JOB_DEATH)
    source = PrometheusSource(settings)
    live = source.poll_now()  # the dead rank is missing in the backend's history all along
    app = RanktopApp(settings, source, poll=False)
    app.opens_at = live.time - settings.refresh_seconds
    async with app.run_test(size=(160, 45)) as pilot:
        workers = [w for w in app.workers if w.group == "moment"]
        await app.workers.wait_for_complete(workers)
        await pilot.pause()
        assert app.moment == aligned(live.time - settings.refresh_seconds,
                                     settings.refresh_seconds)
        header = "\n".join(screen_text(app).splitlines()[:2])
        assert f"AT {shown_zoned(app.moment)}" in header and "press L for live" in header
        shown_kinds = {(i.root.kind, i.rank) for i in app.cluster.incidents}
        assert any(rank == DEAD for _, rank in shown_kinds), shown_kinds
        assert app.moment_analysis is not None and DEAD in app.moment_analysis.down

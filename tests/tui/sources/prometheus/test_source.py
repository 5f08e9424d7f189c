"""The Prometheus source against a scripted client: ranks, joins, fallbacks, failures."""

from __future__ import annotations

import contextlib
import math
import threading
import weakref

import pytest
from ranktop.tui.core import ranks
from ranktop.tui.core.model import Health
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import batch as prom_batch
from ranktop.tui.sources.prometheus import counters as prom_counters
from ranktop.tui.sources.prometheus.client import WHOLE, QueryError, Sample, Series, Vector
from ranktop.tui.sources.prometheus.decode import Notes
from ranktop.tui.sources.prometheus.join import DCGM_FP_BLANK
from ranktop.tui.sources.prometheus.source import PrometheusSource

NOW = 1_800_000_000.0
HOSTS, GPUS = ("h0", "h1"), 2


class ScriptedClient:
    """Answers each of the source's queries, by its key, from a script."""

    backend = ""

    def __init__(self) -> None:
        self.answers: dict[str, list[Sample] | QueryError] = {}
        self.source: PrometheusSource | None = None  # whose poll's queries are known by key
        self.asked: list[str] = []
        self.ranged: list[str] = []
        self.names: list[str] = []  # what discovery is told the backend holds

    def query(self, expression: str, budget: object = None, at: float | None = None
              ) -> Vector:
        # The poll's queries by their key; discovery's and diagnosis's by their PromQL.
        keys = {expr: key for key, expr in self.source.queries().items()} if self.source else {}
        key = keys.get(expression, expression)
        self.asked.append(key)
        answer = self.answers.get(key, [])
        if isinstance(answer, QueryError):
            raise answer
        return as_vector(answer)

    def metric_names(self, since: float) -> list[str]:
        self.asked.append("metric names")
        return self.names

    def targets(self, budget: object = None) -> dict:
        self.asked.append("targets")
        return {"activeTargets": []}

    def label_names(self, metric: str, since: float) -> list[str]:
        return []

    def query_range(self, expression: str, start: float, end: float, step: float
                    ) -> list[Series]:
        """The rank's series runs 70, 71, ...; the job's median, asked for second, 60, 61, ..."""
        self.ranged.append(expression)
        base = 60.0 if expression.startswith("quantile") else 70.0
        times = [start + i * step for i in range(int((end - start) / step) + 1)]
        return [Series({}, [(t, base + i) for i, t in enumerate(times)])]


def as_vector(samples: list[Sample]) -> Vector:
    """Samples as the client gives them, read the general way (with any warnings)."""
    items = [{"metric": s.labels, "value": [s.time, repr(s.value)]} for s in samples]
    return Vector(items, getattr(samples, "notes", WHOLE))


def dcgm(rank: int, value: float, **extra: str) -> Sample:
    host, gpu = HOSTS[rank // GPUS], rank % GPUS
    labels = {"gpu": str(gpu), "UUID": f"GPU-{rank}", "Hostname": host, **extra}
    return Sample(labels, value, NOW)


def job(rank: int, value: float) -> Sample:
    labels = {"rank": str(rank), "hostname": HOSTS[rank // GPUS], "local_rank": str(rank % GPUS),
              "gpu_uuid": f"GPU-{rank}", "training_job": "j"}
    return Sample(labels, value, NOW)


def healthy(n: int = 4) -> dict[str, list[Sample]]:
    return {
        "metric:temperature": [*(dcgm(r, 60.0 + r) for r in range(n)), newest(NOW - 1)],
        "metric:sm_active": [dcgm(r, 88.0, ranktop_way="0") for r in range(n)],
        "metric:step_time": [job(r, 1.1) for r in range(n)],
        "metric:compute_time": [job(r, 0.8) for r in range(n)],
        "job:step": [Sample({}, 1234.0, NOW)],
    }


def stale(rank: int, newest_sample: float) -> Sample:
    """A rank Prometheus finds stale, as the freshness part of the temperature answer."""
    return dcgm(rank, newest_sample, ranktop_fresh="stale")


def newest(when: float) -> Sample:
    """The newest sample of any rank, as the freshness part of the temperature answer."""
    return Sample({"ranktop_fresh": "newest"}, when, NOW)


@pytest.fixture
def source(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    settings = load_settings(overrides={"prometheus": {"url": "http://prom:9090", "job": "j"}},
                             environ={})
    client = ScriptedClient()
    made = PrometheusSource(settings, client=client, clock=lambda: NOW)
    client.source = made
    client.answers.update(healthy())
    return made


def test_one_query_per_metric_whatever_the_number_of_ranks(source):
    source.poll_now()
    assert len(source.client.asked) == len(source.queries())
    assert all(source.client.asked.count(key) == 1 for key in source.queries())


def test_job_labels_name_the_ranks_and_dcgm_joins_by_uuid(source):
    source.client.answers["metric:temperature"] = [
        dcgm(r, 60.0 + r, gpu="7") for r in range(4)  # a container renumbered every GPU
    ]
    frame = source.poll_now()
    assert source.rank_map.source == ranks.FROM_JOB
    assert len(source.rank_map) == 4
    assert frame.values["temperature"] == [60.0, 61.0, 62.0, 63.0]
    assert frame.job["step"] == 1234.0
    assert "DCGM 4/4" in source.status().detail
    assert source.status().health is Health.OK


def test_a_rank_without_series_is_no_data_not_zero(source):
    source.client.answers["metric:temperature"] = [dcgm(r, 60.0) for r in (0, 1, 3)]
    frame = source.poll_now()
    assert math.isnan(frame.values["temperature"][2])
    assert frame.ranks_up(4)[2]  # its job metrics still arrive


def test_a_metric_nobody_exports_is_not_exported_rather_than_zero(source):
    frame = source.poll_now()
    assert "xid" not in frame.values
    assert "power" not in frame.values


def test_dcgm_blank_sentinels_are_no_data(source):
    source.client.answers["metric:temperature"] = [
        dcgm(0, DCGM_FP_BLANK), dcgm(1, 9223372036854775794.0), dcgm(2, 61.0), dcgm(3, 62.0)]
    values = source.poll_now().values["temperature"]
    assert math.isnan(values[0]) and math.isnan(values[1]) and values[2] == 61.0


def test_the_title_says_which_fallback_sm_activity_shows(source):
    frame = source.poll_now()
    assert frame.shows["sm_active"] == "SM active"
    source.client.answers["metric:sm_active"] = [
        dcgm(r, 70.0, ranktop_way="1") for r in range(4)]
    assert source.poll_now().shows["sm_active"] == "graphics engine active"
    source.client.answers["metric:sm_active"] = [
        dcgm(r, 70.0, ranktop_way=str(r % 2)) for r in range(4)]
    assert source.poll_now().shows["sm_active"].endswith("+ others")


def test_ranks_whose_newest_sample_is_old_are_stale(source):
    source.client.answers["metric:temperature"].append(stale(1, NOW - 600))
    assert source.poll_now().stale == frozenset({1})


def test_answers_with_no_new_sample_from_any_rank_are_stale_not_ok(source):
    source.client.answers["metric:temperature"] = [
        *(dcgm(r, 60.0) for r in range(4)), *(stale(r, NOW - 600) for r in range(4)),
        newest(NOW - 600)]
    assert source.poll_now().stale == frozenset(range(4))
    status = source.status()
    assert status.health is Health.STALE and "exporters" in status.message


def test_a_failed_query_keeps_that_maps_last_values_and_says_partial(source):
    source.poll_now()
    source.client.answers["metric:temperature"] = QueryError("HTTP 503", "query timed out")
    frame = source.poll_now()
    assert frame.values["temperature"] == [60.0, 61.0, 62.0, 63.0]
    status = source.status()
    assert status.health is Health.SLOW
    assert "partial" in status.message and "HTTP 503" in status.message


def test_a_failed_query_is_said_unanswered_in_the_frame_not_read_as_no_series(source):
    source.client.answers["metric:pcie_replay"] = QueryError("HTTP 503", "query timed out")
    frame = source.poll_now()
    assert "pcie_replay" not in frame.values
    assert "pcie_replay" in frame.unanswered and "temperature" not in frame.unanswered


def test_an_unreachable_server_is_stale_with_the_last_frame_and_since_when(source):
    source.poll_now()
    refused = QueryError("connection refused", "http://prom:9090")
    source.client.answers = {key: refused for key in source.queries()}
    source.client.asked.clear()
    with pytest.raises(QueryError):
        source.poll_now()
    status = source.status()
    assert status.health is Health.STALE
    assert "connection refused" in status.message
    assert status.since == NOW
    # it stopped asking after the refusal: only the queries already on their way were sent
    assert len(source.client.asked) <= prom_batch.CONCURRENT < len(source.queries())


def test_never_reached_is_an_error_not_stale(source):
    source.client.answers = {key: QueryError("timed out", "no answer") for key in source.queries()}
    with pytest.raises(QueryError):
        source.poll_now()
    assert source.status().health is Health.ERROR


def test_without_job_metrics_ranks_come_from_the_slurm_node_list(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    settings = load_settings(overrides={"prometheus": {"url": "http://prom:9090"},
                                        "ranks": {"gpus_per_node": 2}},
                             environ={"SLURM_JOB_NODELIST": "h[0-1]"})
    client = ScriptedClient()
    made = PrometheusSource(settings, client=client, clock=lambda: NOW)
    client.source = made
    client.answers["metric:temperature"] = [dcgm(r, 60.0 + r) for r in range(4)]
    frame = made.poll_now()
    assert made.rank_map.source == ranks.FROM_SLURM
    assert frame.values["temperature"] == [60.0, 61.0, 62.0, 63.0]


def test_with_nothing_else_ranks_follow_dcgm_host_and_gpu_order_and_say_so(source):
    source.client.answers = {"metric:temperature": [dcgm(r, 50.0 + r) for r in (3, 1, 0, 2)]}
    frame = source.poll_now()
    assert source.rank_map.source == ranks.FROM_DCGM
    assert frame.values["temperature"] == [50.0, 51.0, 52.0, 53.0]
    assert "guessed" in source.status().detail


def test_gpus_new_to_a_guessed_map_join_it_only_when_two_answers_in_a_row_name_them(source):
    guessed = {"metric:temperature": [dcgm(r, 50.0) for r in range(4)]}
    extra = [Sample({"gpu": str(n % 8), "Hostname": f"flood-{n // 8}"}, 1.0, NOW)
             for n in range(10_000)]
    source.client.answers = dict(guessed)
    source.poll_now()
    source.client.answers = {"metric:temperature": [*guessed["metric:temperature"], *extra]}
    source.poll_now()
    assert len(source.rank_map) == 4  # one answer: no trace
    source.client.answers = dict(guessed)
    assert all(source.poll_now().ranks_up(4)) and len(source.rank_map) == 4
    source.client.answers = {"metric:temperature": [*guessed["metric:temperature"], *extra]}
    source.poll_now()
    source.poll_now()
    assert len(source.rank_map) == 4 + 10_000  # named twice in a row: GPUs of the job


def test_no_series_at_all_says_so(source):
    source.client.answers = {}
    source.poll_now()
    assert source.status().health is Health.ERROR
    assert "no series for job 'j'" in source.status().message


def test_a_ranks_history_is_its_own_narrowed_query_beside_the_job_median(source):
    source.poll_now()
    history = source.backfill(2, ["temperature"], 8.0, 4.0)
    assert [(p.time, p.value, p.median) for p in history["temperature"]] == [
        (NOW - 8, 70.0, 60.0), (NOW - 4, 71.0, 61.0), (NOW, 72.0, 62.0)]
    mine, median = source.client.ranged
    assert mine == ('DCGM_FI_DEV_GPU_TEMP{UUID="GPU-2"} or '
                    'DCGM_FI_DEV_GPU_TEMP_CELSIUS{UUID="GPU-2"} or '
                    'DCGM_FI_DEV_GPU_TEMP{uuid="GPU-2"} or '
                    'DCGM_FI_DEV_GPU_TEMP_CELSIUS{uuid="GPU-2"}')
    assert median == ("quantile(0.5, DCGM_FI_DEV_GPU_TEMP{} or "
                      "DCGM_FI_DEV_GPU_TEMP_CELSIUS{})")
    assert source.backfill(4, ["temperature"], 8.0, 4.0) == {}  # no such rank


def test_a_ranks_job_history_is_asked_by_job_and_rank(source):
    source.poll_now()
    source.backfill(3, ["step_time"], 8.0, 4.0)
    assert source.client.ranged[0].split(" or ")[0] == (
        'training_step_seconds{training_job="j",rank="3"}')


class Warned(list):
    """A vector with the server's warnings, as Thanos sends a partial answer."""

    notes = Notes(("fetch series for {job=\"x\"} Addr: store-b:10901: rpc error: code = "
                   "Unavailable desc = connection refused",))


def test_a_partial_answer_is_shown_as_partial_never_as_ok(source):
    source.client.answers["metric:temperature"] = Warned(healthy()["metric:temperature"])
    source.poll_now()
    status = source.status()
    assert status.health is Health.SLOW
    assert status.message == "1 part of the backend failed — store-b:10901: " \
                             "connection refused"
    assert status.partial == Warned.notes.partial


def test_ranks_a_partial_answer_left_out_are_not_answered_not_down(source):
    source.poll_now()  # all four ranks known
    half = {key: [x for x in samples if x.labels.get("rank", x.labels.get("UUID", "")[-1:])
                  not in ("2", "3")] for key, samples in healthy().items()}
    source.client.answers.update(half)
    source.client.answers["metric:step_time"] = Warned(half["metric:step_time"])
    frame = source.poll_now()
    assert frame.ranks_up(4) == [True, True, False, False]
    assert frame.unknown == {2, 3}
    assert source.status().message.endswith("; 2 ranks not answered (not known, not down)")
    source.client.answers.update(healthy())  # the store is back: whole again
    frame = source.poll_now()
    assert frame.unknown == frozenset() and source.status().partial == ()
    source.client.answers.update(half)  # a whole answer without them: they are down
    assert source.poll_now().unknown == frozenset()


def test_the_newest_samples_real_age_is_said_and_victoria_metrics_named(source):
    temperatures = source.client.answers["metric:temperature"]
    temperatures[-1] = newest(NOW - 31)
    source.poll_now()
    assert "newest sample 31 s old" in source.status().detail
    assert "VictoriaMetrics" not in source.status().detail
    source.client.backend = "VictoriaMetrics"
    source.poll_now()
    assert "VictoriaMetrics hides its newest samples, 30 s by default: set [prometheus] " \
           'latency_offset = "1s"' in source.status().detail
    temperatures[-1] = newest(NOW - 1)
    source.poll_now()
    assert "newest sample" not in source.status().detail


def test_an_empty_job_side_is_looked_for_now_and_then_and_said_on_its_maps(source):
    del source.client.answers["metric:step_time"], source.client.answers["metric:compute_time"]
    for _ in range(3):
        frame = source.poll_now()
    assert source.client.asked.count("metric names") == 1  # discovery: not every poll
    assert "step_time" not in frame.values
    assert frame.absent["step_time"] == ("no training_step_seconds series at all; no scrape "
                                         "targets at all (no up series)")
    assert "temperature" not in frame.absent  # it has values


def test_a_late_start_asks_for_the_jobs_recent_loss_and_when_each_rank_last_reported(source):
    source.poll_now()
    last = ("max by (rank) (max_over_time(timestamp(training_step_seconds"
            '{training_job="j"})[900s:10s]))')
    source.client.answers[last] = [Sample({"rank": "1"}, NOW - 30, NOW),
                                   Sample({"rank": "9"}, NOW - 5, NOW),  # not a rank of the job
                                   Sample({"rank": "x"}, NOW - 5, NOW)]
    found = source.lookback(["loss", "tokens_per_s"], 4.0, 2.0)
    assert found.last_seen == {1: NOW - 30}
    assert found.job["loss"] == [(NOW - 4, 70.0), (NOW - 2, 71.0), (NOW, 72.0)]
    assert source.client.ranged[0] == 'avg(training_loss{training_job="j"})'


def test_a_late_start_asks_for_each_error_counters_lowest_value_before_it(source):
    source.poll_now()
    crc = f"min_over_time(({source.queries()['metric:nvlink_errors']})[600s:60s])"
    rows = f"min_over_time(({source.queries()['metric:remapped_rows']})[600s:60s])"
    source.client.answers[crc] = [dcgm(r, 0.0 if r == 2 else 40.0) for r in range(3)]
    source.client.answers[rows] = QueryError("HTTP 503", "query timed out")
    found = source.lookback([], 4.0, 2.0)
    assert list(found.counters) == ["nvlink_errors"]  # the one that failed is not known
    lowest = found.counters["nvlink_errors"]
    assert lowest[:3] == [40.0, 40.0, 0.0] and math.isnan(lowest[3])  # rank 3: no series
    assert found.counters_at == NOW - 600  # the ledger's window before the start


def with_extra_ranks(source, up_to: int) -> None:
    """The job's four ranks answer step times, and so do ranks 4..``up_to`` - 1 of hosts
    of their own: a hostile answer's flood."""
    extra = [Sample({"rank": str(r), "hostname": f"x{r}", "local_rank": "0",
                     "training_job": "j"}, 1.0, NOW) for r in range(4, up_to)]
    source.client.answers["metric:step_time"] = [job(r, 1.1) for r in range(4)] + extra


def test_one_answer_of_100000_extra_ranks_leaves_no_trace(source):
    source.poll_now()
    with_extra_ranks(source, 100_004)
    source.poll_now()
    assert len(source.rank_map) == 4  # growth needs a second answer in a row
    assert f"{100_004 - ranks.rank_ceiling(4)} rank(s) numbered past" in source.status().detail
    source.client.answers.update(healthy())
    frame = source.poll_now()
    assert len(source.rank_map) == 4 and all(frame.ranks_up(4))
    assert "numbered past" not in source.status().detail  # said while the labels say it


def test_extra_ranks_in_two_answers_in_a_row_grow_the_map_to_near_the_jobs_size(source):
    source.poll_now()
    with_extra_ranks(source, 2_004)
    source.poll_now()
    source.poll_now()
    assert len(source.rank_map) == ranks.rank_ceiling(4)


class CountingClient(ScriptedClient):
    """Counts the queries in flight at once, and the answers still alive at each query."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = self.most_alive = 0
        self.alive: weakref.WeakSet[Vector] = weakref.WeakSet()
        self.gate = threading.Barrier(prom_batch.CONCURRENT, timeout=5)
        self.gated = 0

    def query(self, expression: str, budget: object = None) -> Vector:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.most_alive = max(self.most_alive, len(self.alive))
            self.gated += 1
            gated = self.gated <= prom_batch.CONCURRENT
        try:
            if gated:
                with contextlib.suppress(threading.BrokenBarrierError):
                    self.gate.wait()  # only passes when CONCURRENT queries are out at once
            answer = super().query(expression, budget)
            self.alive.add(answer)
            return answer
        finally:
            with self.lock:
                self.in_flight -= 1


def test_a_polls_queries_go_out_a_few_at_a_time_and_each_answer_is_let_go_once_joined(source):
    client = CountingClient()
    client.answers = healthy()
    polled = PrometheusSource(source.configured, client=client, clock=lambda: NOW)
    client.source = polled
    frame = polled.poll_now()
    assert frame.values["temperature"] == [60.0, 61.0, 62.0, 63.0]
    assert not client.gate.broken  # CONCURRENT queries were out at once
    assert client.most_in_flight == prom_batch.CONCURRENT
    # those on their way (and one being joined), never all of them
    assert client.most_alive <= 1 + prom_batch.CONCURRENT < len(polled.queries())


def test_a_metric_of_several_ways_is_asked_only_the_way_that_answered_until_fewer_answer(source):
    def ways_asked() -> int:
        return source.queries()["metric:sm_active"].count("label_replace(")

    assert ways_asked() == 3
    source.poll_now()  # every GPU answered SM active (way 0)
    assert ways_asked() == 1 and "DCGM_FI_PROF_SM_ACTIVE" in source.queries()["metric:sm_active"]
    frame = source.poll_now()
    assert frame.values["sm_active"] == [88.0] * 4 and frame.shows["sm_active"] == "SM active"
    assert ways_asked() == 1
    source.client.answers["metric:sm_active"] = [dcgm(r, 88.0, ranktop_way="0") for r in range(3)]
    frame = source.poll_now()  # one GPU went quiet on it: every way again, from the next poll
    assert math.isnan(frame.values["sm_active"][3])
    assert ways_asked() == 3


def test_error_counters_are_asked_only_above_zero_and_in_full_now_and_then(source):
    source.client.answers["metric:ecc_dbe"] = [dcgm(r, 0.0) for r in range(3)]  # 3 exports it
    source.poll_now()  # learns the ranks: the next poll reads every series
    frame = source.poll_now()
    assert frame.values["ecc_dbe"][:3] == [0.0] * 3 and math.isnan(frame.values["ecc_dbe"][3])
    source.client.answers["metric:ecc_dbe"] = []
    frame = source.poll_now()
    assert source.queries()["metric:ecc_dbe"].endswith(" > 0")
    assert frame.values["ecc_dbe"][:3] == [0.0] * 3 and math.isnan(frame.values["ecc_dbe"][3])
    source.client.answers["metric:ecc_dbe"] = [dcgm(1, 2.0)]  # a fault: in this very poll
    assert source.poll_now().values["ecc_dbe"][:3] == [0.0, 2.0, 0.0]
    for _ in range(prom_counters.FULL_EVERY - 3):
        source.poll_now()
    source.client.answers["metric:ecc_dbe"] = [dcgm(r, float(r == 1)) for r in range(4)]
    frame = source.poll_now()  # every FULL_EVERY polls, in full again
    assert not source.queries()["metric:ecc_dbe"].endswith(" > 0")
    assert frame.values["ecc_dbe"] == [0.0, 1.0, 0.0, 0.0]


def test_a_gpu_whose_series_are_gone_reads_no_error_count_not_zero(source):
    source.client.answers["metric:ecc_dbe"] = [dcgm(r, 0.0) for r in range(4)]
    source.poll_now()
    source.poll_now()  # in full: every GPU exports the counter
    source.client.answers["metric:ecc_dbe"] = []
    source.client.answers["metric:temperature"] = [dcgm(r, 60.0) for r in range(1, 4)]
    frame = source.poll_now()  # rank 0's GPU answers nothing any more
    assert math.isnan(frame.values["ecc_dbe"][0]) and frame.values["ecc_dbe"][1:] == [0.0] * 3


def test_a_rank_down_is_told_frozen_or_gone_by_the_live_scrape_asked_when_it_goes(source):
    client = source.client
    client.answers.update({key: [s for s in samples if s.labels.get("rank") != "2"
                                 and s.labels.get("UUID") != "GPU-2"]
                           for key, samples in healthy().items() if key.startswith("metric:")})
    down = {"labels": {"instance": "10.0.0.2:9100", "job": "j"}, "health": "down",
            "lastError": 'Get "http://10.0.0.2:9100/metrics": context deadline exceeded'}
    client.targets = lambda budget=None, scrape_pool="": (
        client.asked.append(f"targets of {scrape_pool}") or {"activeTargets": [down]})
    placed = [Sample({"rank": str(r), "instance": f"10.0.0.{r}:9100", "job": "j"}, 1.0, NOW)
              for r in range(4)]
    asked = client.query

    def query(expression, budget=None, at=None):
        if expression.startswith("group by (rank, instance, job)"):
            client.asked.append("instances")
            return as_vector(placed)
        return asked(expression, budget, at)

    client.query = query
    frame = source.poll_now()
    assert frame.scrape == {2: "scrape timing out: alive but frozen?"}
    assert client.asked.count("targets of j") == 1 and client.asked.count("instances") == 1
    source.poll_now()  # still the same rank down, a moment later: not asked again
    assert client.asked.count("targets of j") == 1

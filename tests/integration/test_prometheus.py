"""ranktop against a real Prometheus, and a real VictoriaMetrics, scraping `ranktop simulate`
every second: the tests that take ``backend`` run against each with the same assertions."""

from __future__ import annotations

from statistics import median

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.cli.main import main
from ranktop.tui.core import ranks
from ranktop.tui.core.model import Health
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource
from ranktop.widgets import palette
from ranktop.widgets.panel import MetricPanel

from tests.integration.cluster import Prometheus, get_json, wait_for
from tests.integration.conftest import JOB_DEATH, JOB_FAULTS
from tests.tui.conftest import screen_text


def settings_for(prometheus: Prometheus, job: str):
    """The job on this backend; VictoriaMetrics (and Prometheus, which ignores it) asked for
    its newest samples, as the README advises for VictoriaMetrics."""
    return load_settings(overrides={"prometheus": {"url": prometheus.url, "job": job,
                                                   "latency_offset": "1s"}}, environ={})


def heatmap(app, index):
    return app.screen.query_one(f"#map-{index}", MetricPanel).heatmap


async def polled(app, pilot):
    await app.poll_once()
    await pilot.pause()
    await pilot.pause()


async def test_the_app_shows_the_jobs_ranks_values_and_faults(backend):
    source = PrometheusSource(settings_for(backend, JOB_FAULTS))
    app = RanktopApp(source.settings, source, poll=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await polled(app, pilot)
        text = screen_text(app)
        assert "ranks 512/512 up" in text
        assert "SM activity (SM active)" in text
        await pilot.press("question_mark")  # the source's detail: on the help screen
        assert "ranks from job metric labels, DCGM 512/512" in screen_text(app)
        await pilot.press("escape")
        assert source.rank_map.source == ranks.FROM_JOB
        assert source.rank_map.ranks[37].host == "gpu-node-004"
        assert source.gpu_model(37) == "NVIDIA H100 80GB HBM3"  # from DCGM's modelName label
        frame = app.cluster.frame
        # rank 37 throttles: hot, thermal bits set, its cell at the hot end of the scale
        assert frame.values["temperature"][37] > 84
        assert int(frame.values["throttle_reasons"][37]) & 0x60 == 0x60
        assert heatmap(app, 1).level_of(37) >= palette.LEVELS - 2
        # rank 201 straggles: only compute time singles it out
        compute = frame.values["compute_time"]
        assert compute[201] > 1.35 * median(compute)
        await pilot.press("slash", *"37", "enter")
        assert "rank 37 gpu-node-004 GPU 5" in screen_text(app)
        assert "HW thermal" in screen_text(app)


async def test_a_dead_rank_is_missing_and_counted(backend):
    source = PrometheusSource(settings_for(backend, JOB_DEATH))
    app = RanktopApp(source.settings, source, poll=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await polled(app, pilot)
        assert "ranks 511/512 up" in screen_text(app)
        assert "1 missing" in screen_text(app)
        assert all(heatmap(app, i).level_of(455) == palette.MISSING for i in range(4))
        # dead before ranktop started: its place is inferred from its neighbours, and said so
        dead = source.rank_map.ranks[455]
        assert (dead.host, dead.gpu, dead.inferred) == ("gpu-node-056", 7, True)
        assert source.rank_map.ranks[456].host == "gpu-node-057"
        # its row says so (on a busy machine, ranks late to their first scrape may push
        # it below the panel's fold: the row is read from the panel's incidents)
        (row,) = [i for i in app.cluster.incidents if i.rank == 455]
        assert row.root.kind == "never_seen"
        assert row.root.summary == ("has not reported in the 15 min before ranktop started, "
                                    "nor since: down before it?")


def test_check_config_runs_every_query_against_the_server(backend, capsys, monkeypatch):
    monkeypatch.setenv("RANKTOP_LATENCY_OFFSET", "1s")
    code = main(["check-config", "--prometheus", backend.url, "--job", JOB_FAULTS])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ok: " in out
    # both simulated jobs' GPUs answer; the job's 512 ranks are picked out of them
    assert "metric:temperature       ok   1023 series" in out
    assert "temperature           512 of 512 ranks" in out


def test_the_shipped_alerting_rules_load_and_evaluate(prometheus):
    def evaluated() -> bool:
        groups = get_json(f"{prometheus.url}/api/v1/rules")["data"]["groups"]
        rules = [rule for group in groups for rule in group["rules"]]
        return len(rules) >= 7 and all(rule.get("lastEvaluation", "").startswith("20")
                                       for rule in rules)

    wait_for(evaluated, "every rule evaluated once")
    groups = get_json(f"{prometheus.url}/api/v1/rules")["data"]["groups"]
    assert {g["name"] for g in groups} >= {"ranktop-gpu", "ranktop-training"}
    assert all(rule["health"] == "ok" for g in groups for rule in g["rules"])


async def test_prometheus_killed_then_restarted_shows_stale_then_recovers(simulators,
                                                                         tmp_path):
    server = Prometheus(tmp_path, [simulators[0].port])
    try:
        server.wait_for_series("count(training_step_seconds)", 512)
        source = PrometheusSource(settings_for(server, JOB_FAULTS))
        app = RanktopApp(source.settings, source, poll=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await polled(app, pilot)
            assert source.status().health is Health.OK
            server.stop()
            await polled(app, pilot)
            text = screen_text(app)
            assert "STALE" in text and "connection refused" in text
            assert "ranks 512/512 up" in text  # the last good frame stays on screen
            assert app.cluster.has_class("-stale")
            server.start()
            server.wait_for_series("count(training_step_seconds)", 512)
            await polled(app, pilot)
            assert source.status().health is Health.OK
            assert "STALE" not in screen_text(app)
            assert not app.cluster.has_class("-stale")
    finally:
        server.stop()


def test_a_ranks_history_comes_back_from_range_queries(backend):
    import time as clock

    source = PrometheusSource(settings_for(backend, JOB_FAULTS))
    source.poll_now()
    clock.sleep(2.0)  # a few scrapes of history
    # VictoriaMetrics leaves its newest (hidden) samples out of range queries: wait for older
    wait_for(lambda: source.backfill(37, ["temperature"], 60.0, 1.0)["temperature"],
             "some history")
    history = source.backfill(37, ["temperature", "compute_time"], 60.0, 1.0)
    temperatures = [p.value for p in history["temperature"]]
    assert temperatures and max(temperatures) > 84
    assert all(p.median < 70 for p in history["temperature"] if p.median == p.median)
    assert history["compute_time"] and history["compute_time"][-1].value > 0.9


def test_a_poll_times_its_queries_and_knows_its_slowest_answers_size(backend):
    source = PrometheusSource(settings_for(backend, JOB_FAULTS))
    source.poll_now()
    status = source.status()
    slowest = status.slowest
    assert slowest is not None and slowest.key in source.queries()
    assert 0 < slowest.seconds <= status.poll_seconds  # one clock: within the poll
    assert slowest.size > 0  # the bytes of its body, as the backend sent them

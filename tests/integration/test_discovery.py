"""First contact with a cluster whose job names its metrics its own way, behind a real
Prometheus and a real VictoriaMetrics: `ranktop simulate --job-metrics foreign` exports
training_step_duration_seconds and friends labelled job, rank, local_rank and hostname (or,
on Kubernetes, only the pod). A fresh user runs check-config, pastes what it printed, and
gets working maps; `init` writes the same lines once; the console uses an unambiguous find
and says so, and an ambiguous one it only suggests, on the empty map. Where there is no data
at all, it says why: targets down, another job, a selector that matches nothing.
"""

from __future__ import annotations

import math
import re

import pytest
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.cli.main import main
from ranktop.tui.core.model import Health
from ranktop.tui.core.ranks import FROM_JOB
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource
from ranktop.widgets.panel import MetricPanel

from tests.integration.cluster import (
    BACKENDS,
    HERE,
    Simulator,
    VictoriaMetrics,
    free_port,
    wait_for,
)
from tests.integration.conftest import BACKEND_NAMES, HIDDEN
from tests.tui.conftest import screen_text

FOREIGN, FOREIGN_K8S = "integration-foreign", "integration-foreign-k8s"
RANKS = 16  # two nodes of eight, each job
PASTE = "over its own tables of the same name:\n\n"


def pasted_lines(out: str) -> str:
    """The lines check-config offers to paste: after PASTE, before its closing verdict."""
    return out.split(PASTE, 1)[1].rsplit("\n\n", 1)[0]


@pytest.fixture(scope="module")
def foreign_simulators():
    scenario, names = HERE / "scenario-hardware.toml", ("--job-metrics", "foreign")
    started = [Simulator(scenario, seed=11, nodes=2, extra=(*names, "--job", FOREIGN)),
               Simulator(scenario, seed=12, nodes=2,
                         extra=(*names, "--job", FOREIGN_K8S, "--profile", "k8s"))]
    yield started
    for simulator in started:
        simulator.stop()


def _server(request, tmp_path_factory, ports=None, jobs=None):
    kind = BACKENDS[request.param]
    extra = {"latency_offset": HIDDEN} if kind is VictoriaMetrics else {}
    return kind(tmp_path_factory.mktemp(f"discovery-{request.param}"), ports or [], jobs=jobs,
                **extra)


@pytest.fixture(scope="module", params=BACKEND_NAMES)
def foreign(request, foreign_simulators, tmp_path_factory):
    """Each backend scraping the two foreign jobs; ranktop asks it for its newest samples."""
    server = _server(request, tmp_path_factory, [s.port for s in foreign_simulators])
    try:
        server.wait_for_series("count(training_step_duration_seconds)", 2 * RANKS)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module", params=BACKEND_NAMES)
def dark(request, tmp_path_factory):
    """Each backend whose only targets, the job's and dcgm-exporter's, are down."""
    jobs = {"training": [free_port()], "dcgm-exporter": [free_port()]}
    server = _server(request, tmp_path_factory, jobs=jobs)
    try:
        server.wait_for_series("count(up == 0)", 2)
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def newest_samples(monkeypatch):
    monkeypatch.setenv("RANKTOP_LATENCY_OFFSET", "1s")


def settings_for(url: str, **prometheus):
    return load_settings(overrides={"prometheus": {"url": url, **prometheus}})


def check_config(capsys, *argv: str) -> tuple[int, str]:
    code = main(["check-config", *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("job", [FOREIGN, FOREIGN_K8S])
def test_pasting_what_check_config_printed_gives_working_maps(foreign, capsys, tmp_path, job):
    code, out = check_config(capsys, "--prometheus", foreign.url, "--job", job)
    assert code == 0, out
    assert "training_step_seconds{training_job=" in out  # the configured name: no series
    assert "discovery: series that look like the job's metrics, best first" in out
    assert f'exported_job = "{job}" (the only one)' in out
    assert ("training_step_duration_seconds  16 ranks; labels: rank=rank, local GPU=local_rank, "
            f"{'host=hostname' if job == FOREIGN else 'pod=pod'}, job=exported_job") in out
    assert ("(VictoriaMetrics) answered" in out) == isinstance(foreign, VictoriaMetrics)
    pasted = pasted_lines(out)
    assert out.rstrip().splitlines()[-1].startswith(("ready: ", "not ready: "))
    config = tmp_path / "config.toml"
    config.write_text(pasted)

    source = PrometheusSource(load_settings(config, {"prometheus": {"url": foreign.url}}))
    frame = source.poll_now()
    assert source.finder.adopted == {}  # the config says it all now: nothing is guessed
    assert source.rank_map.source == FROM_JOB and len(source.rank_map) == RANKS
    for metric in ("step_time", "compute_time", "temperature"):
        assert not any(math.isnan(v) for v in frame.values[metric]), metric
    assert all(not math.isnan(frame.job[key])
               for key in ("step", "loss", "tokens_per_s", "checkpoint_step"))
    # the job's own checkpoint metric, found by its name: a restart resumes from it
    assert 'checkpoint_step = "max(last_checkpoint_iteration{job})"' in pasted
    assert frame.job["checkpoint_step"] % 100 == 0 and frame.job["checkpoint_step"] <= \
        frame.job["step"]
    rank = source.rank_map.ranks[9]
    assert (rank.host, rank.gpu) == ("gpu-node-001", 1)  # on k8s, the node from DCGM's pod
    assert rank.pod == ("" if job == FOREIGN else f"{job}-worker-1")
    assert source.status().health is Health.OK

    code, again = check_config(capsys, "--config", str(config), "--prometheus", foreign.url)
    assert code == 0 and "discovery:" not in again
    assert re.search(rf"step_time +{RANKS} of {RANKS} ranks", again)


def test_without_a_job_named_check_config_lists_each_job_and_picks_one(foreign, capsys):
    _, out = check_config(capsys, "--prometheus", foreign.url)
    assert f'exported_job = "{FOREIGN}"; also "{FOREIGN_K8S}"' in out
    assert f'# the job with the most ranks; others: "{FOREIGN_K8S}"' in out
    assert f'job = "{FOREIGN}"' in pasted_lines(out)


async def test_the_console_uses_an_unambiguous_find_and_says_so(foreign):
    source = PrometheusSource(settings_for(foreign.url, job=FOREIGN))
    app = RanktopApp(source.settings, source, poll=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        text = screen_text(app)
        assert "Step time (training_step_duration_seconds, found)" in text
        assert f"ranks {RANKS}/{RANKS} up" in text
    detail = source.status().detail
    assert ("using training_step_compute_seconds, training_step_duration_seconds of "
            f'exported_job="{FOREIGN}": found, not in your config (unambiguous') in detail
    assert source.rank_map.source == FROM_JOB


async def test_an_ambiguous_find_is_only_suggested_on_the_empty_map(foreign):
    source = PrometheusSource(settings_for(foreign.url))  # two jobs: which one is not said
    app = RanktopApp(source.settings, source, poll=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        await pilot.press("4")  # the step-time map, full width
        await pilot.pause()
        panel = app.screen.query_one("#map-3", MetricPanel)
        assert panel.legend.summaries[0] == (
            "not exported — `ranktop check-config` suggests training_step_duration_seconds")
        assert "suggests training_step_duration_seconds" in screen_text(app)
    assert source.finder.adopted == {}
    assert "job metrics not exported; `ranktop check-config` suggests " \
           "training_step_duration_seconds" in source.status().detail


def test_init_writes_the_lines_and_merges_into_a_file_it_keeps(foreign, capsys, tmp_path):
    written = tmp_path / "xdg" / "ranktop" / "config.toml"
    assert main(["init", "--prometheus", foreign.url, "--job", FOREIGN_K8S]) == 0
    out = capsys.readouterr().out
    text = written.read_text()
    assert f"written to {written}" in out and text.split("\n\n", 1)[1] in out
    assert 'pod_label = "pod"' in text and 'step_metric = "training_step_duration_seconds"' in text
    frame = PrometheusSource(load_settings()).poll_now()  # the file at the XDG path
    assert not any(math.isnan(v) for v in frame.values["step_time"])

    # again, for the other job and with its logs: merged into the file, kept first
    assert main(["init", "--prometheus", foreign.url, "--job", FOREIGN,
                 "--logs", str(tmp_path / "rank{rank}.log")]) == 0
    out = capsys.readouterr().out
    backup = written.with_name("config.toml.bak")
    assert f"merged into {written} (what it held is in {backup})" in out
    assert backup.read_text() == text
    settings = load_settings()  # the merged file loads as it is
    assert settings.prometheus.job == FOREIGN and settings.log_spec.endswith("rank{rank}.log")


def test_the_job_named_wrong_and_a_selector_that_matches_nothing_say_so(foreign, capsys):
    settings = load_settings(overrides={
        "prometheus": {"url": foreign.url, "job": "nope", "dcgm_selector": 'cluster="b"'},
        "ranks": {"job_label": "exported_job", "step_metric": "training_step_duration_seconds"},
        "metrics": {"step_time": {"promql": "training_step_duration_seconds{job}"}}})
    source = PrometheusSource(settings)
    source.poll_now()
    status = source.status()
    assert status.health is Health.ERROR
    assert ('training_step_duration_seconds has no series with exported_job="nope"; it has '
            f'exported_job="{FOREIGN}" (16 series), "{FOREIGN_K8S}" (16 series)'
            ) in status.message
    assert (f"DCGM_FI_DEV_GPU_TEMP has {2 * RANKS} series, none matching {{cluster=\"b\"}}"
            in status.message)
    assert source.finder.adopted == {}  # the job the user named is not there: nothing used


def test_targets_down_are_counted_on_screen_and_in_check_config(dark, capsys):
    source = PrometheusSource(settings_for(dark.url, job="llm"))
    source.poll_now()
    message = source.status().message
    assert message.startswith("no series for job 'llm': no training_step_seconds series at all")
    assert 'scrape targets down (up == 0): "training" 1 of 1' in message
    assert ('no DCGM_FI_DEV_GPU_TEMP series at all; dcgm-exporter scrape targets down '
            '(up == 0): "dcgm-exporter" 1 of 1') in message
    assert source.finder.discovery.candidates == ()

    _, out = check_config(capsys, "--prometheus", dark.url, "--job", "llm")
    assert "why some queries came back empty" in out
    assert 'job metrics:   no training_step_seconds series at all; scrape targets down' in out
    assert 'DCGM:          no DCGM_FI_DEV_GPU_TEMP series at all; dcgm-exporter scrape' in out


async def test_an_empty_map_says_its_targets_are_down(dark):
    source = PrometheusSource(settings_for(dark.url, job="llm"))
    app = RanktopApp(source.settings, source, poll=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        await pilot.press("2")  # the temperature map, full width
        await pilot.pause()
        assert ('not exported — no DCGM_FI_DEV_GPU_TEMP series at all; dcgm-exporter scrape '
                'targets down (up == 0): "dcgm-exporter" 1 of 1') in screen_text(app)
        assert "ERROR" in screen_text(app)


@pytest.mark.parametrize("foreign", ["victoria-metrics"], indirect=True)
def test_victoria_metrics_newest_sample_age_is_shown_unless_asked_for_fresh(foreign,
                                                                           monkeypatch):
    monkeypatch.delenv("RANKTOP_LATENCY_OFFSET")
    hiding = PrometheusSource(settings_for(foreign.url, job=FOREIGN))
    # a fresh VictoriaMetrics shows nothing until its data is older than what it hides
    wait_for(lambda: "temperature" in hiding.poll_now().values, "data older than 8 s")
    assert "newest sample " in hiding.status().detail
    assert "VictoriaMetrics hides its newest samples" in hiding.status().detail
    fresh = PrometheusSource(settings_for(foreign.url, job=FOREIGN, latency_offset="1s"))
    fresh.poll_now()
    assert "newest sample" not in fresh.status().detail

"""`ranktop report`: text for tickets, JSON for scripts, and its exit codes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.cli.report import as_json, as_text, collect, exit_code
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import DemoSource, demo_source

from tests.tui.conftest import START, CpuCluster, FakeClock
from tests.tui.scripted_http import Scripted


def report_at(at: float, duration: float = 0.0, log_root=None, cluster=None):
    """A report of the demo ``at`` seconds into its scenario, polling for ``duration``
    (with ``log_root``, its ranks write their logs there; ``cluster``: a simulated job of
    the test's own)."""
    settings = load_settings(environ={})
    clock = FakeClock(START + at)
    source = (demo_source(DemoSettings(64, 8, 7), clock, started=START, log_root=log_root)
              if cluster is None else DemoSource(cluster, clock, START))

    def sleep(seconds: float) -> None:
        clock.now += seconds

    findings = collect(settings, ThreadEngine(settings, source), duration, clock=clock, sleep=sleep)
    return findings, settings


def test_a_healthy_moment_reports_nothing_wrong_and_exits_0():
    findings, settings = report_at(2.0)
    assert exit_code(findings) == 0
    text = as_text(findings, settings)
    assert "ranks: 512/512 up" in text
    assert "anomalies: none active" in text
    assert "worst ranks:" in text and "GPU temperature" in text


def test_a_polled_window_finds_the_fault_and_exits_1():
    # node 37's NVLink, then an ECC error, while rank 201 still straggles
    findings, settings = report_at(100.0, duration=40.0)
    assert exit_code(findings) == 1
    text = as_text(findings, settings)
    assert "anomalies (5 active):" in text
    assert "critical  rank 128 (gpu-node-016 GPU 0)  memory: row(s) remapped +1" in text
    # the CRC errors on the GPU whose counter climbs, the bandwidth drop on its node
    assert "major     rank 300 (gpu-node-037 GPU 4)  nvlink errors: NVLink CRC error(s) on" in text
    assert "critical  rank 128 (gpu-node-016 GPU 0)  ecc: 1 uncorrectable" in text
    assert "critical  rank 201 (gpu-node-025 GPU 1)  straggler: compute 1.45x the median" in text
    assert "major     rank 296 (gpu-node-037 GPU 0)  nvlink: NVLink of node gpu-node-037" in text


def test_json_carries_the_same_findings_for_scripts():
    findings, settings = report_at(100.0, duration=40.0)
    document = json.loads(as_json(findings, settings))
    assert document["healthy"] is False
    assert document["ranks"] == {"total": 512, "up": 512, "missing": [], "not_answered": []}
    assert document["source"]["partial"] == [] and document["source"]["infos"] == []
    kinds = {(a["kind"], a["rank"], a["host"], a["gpu"]) for a in document["anomalies"]}
    assert {("ecc", 128, "gpu-node-016", 0), ("nvlink", 296, "gpu-node-037", 0)} <= kinds
    assert len(document["worst"]["temperature"]) == 3


def test_a_job_without_gpu_data_is_reported_by_local_rank_in_text_and_json():
    findings, settings = report_at(60.0, cluster=CpuCluster())
    text = as_text(findings, settings)
    assert "rank 37 (gpu-node-004 local rank 5)  straggler" in text
    assert "one of 2 slow ranks" in text
    assert "GPU" not in text
    document = json.loads(as_json(findings, settings))
    straggler = next(a for a in document["anomalies"] if a["rank"] == 37)
    assert (straggler["host"], straggler["gpu"], straggler["local_rank"]) == (
        "gpu-node-004", None, 5)
    with_gpus, _ = report_at(60.0)
    entry = next(a for a in json.loads(as_json(with_gpus, settings))["anomalies"]
                 if a["rank"] == 37)
    assert (entry["gpu"], entry["local_rank"]) == (5, None)


def test_what_came_and_went_during_the_window_is_listed_as_resolved():
    findings, settings = report_at(150.0, duration=30.0)  # the ECC error clears at 170 s
    assert any(a.kind == "ecc" for a in findings.resolved)
    assert "since resolved:" in as_text(findings, settings)


def test_the_command_exits_2_on_usage_errors_and_without_a_source(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["report", "--duration", "soon"])
    assert caught.value.code == 2
    assert main(["report"]) == 2
    assert "no data source" in capsys.readouterr().err


def test_an_unreachable_prometheus_is_reported_and_exits_1(capsys):
    assert main(["report", "--prometheus", "http://127.0.0.1:9", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["healthy"] is False
    assert "connection refused" in document["source"]["message"]


def test_a_first_poll_that_times_out_is_never_called_healthy(server, tmp_path, capsys):
    Scripted.delay = 2.0  # a backend under load: no answer within the client's timeout
    config = tmp_path / "config.toml"
    config.write_text("[prometheus]\ntimeout_seconds = 0.5\n")
    assert main(["report", "--config", str(config), "--prometheus", server]) == 1
    text = capsys.readouterr().out
    assert "could not read the source" in text and "healthy" not in text
    assert main(["report", "--config", str(config), "--prometheus", server, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["healthy"] is False and document["source"]["health"] == "error"


def test_a_report_made_during_the_hang_names_the_culprit_from_the_logs(tmp_path):
    # 455 died at 172 and the job restarts at 220: the report ends at 216, and waits for the
    # triage its last poll asked for, which reads the logs as they are then
    findings, settings = report_at(196.0, duration=20.0, log_root=tmp_path)
    hangs = [a for a in findings.active if a.kind == "hang"]
    assert hangs and hangs[0].rank == 455
    assert "hang:" in as_text(findings, settings)


def test_a_gpu_error_its_rank_survives_names_no_dead_rank_in_the_stall_after_it(tmp_path):
    # XID 94 on rank 410 at 240 s, inside the data-loader stall (232-257 s): the rank lives
    # on, so its log says nothing of a crash, and the stall's triage names nobody dead
    findings, _ = report_at(236.0, duration=20.0, log_root=tmp_path)
    assert not [a for a in findings.active if a.kind == "hang"]
    assert not [a for a in findings.active if a.kind == "missing"]
    assert any(a.kind == "xid" and a.rank == 410 for a in findings.active)


async def test_the_report_and_the_console_find_the_same_anomalies_in_the_same_frames():
    from tests.tui.conftest import make_app

    app = make_app(at=100.0)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(20):  # 40 s of polls, the console's own clock moving 2 s a poll
            await app.poll_once()
            await pilot.pause()
            app.clock.now += 2.0
        console = {(a.kind, a.rank, a.since) for a in app.analysis.anomalies}
    findings, _ = await asyncio.to_thread(report_at, 100.0, 38.0)  # it runs its own loop
    assert console == {(a.kind, a.rank, a.since) for a in findings.active}
    assert {"ecc", "nvlink"} <= {kind for kind, _, _ in console}


def test_a_short_report_lists_pending_and_confirmed_from_their_real_starts():
    # rank 201 began straggling at 50 s; node 37's hot GPU has slowed its rank since 20 s,
    # and its thermal throttle ended at 66 s: a report started at 56 s knows both starts
    findings, settings = report_at(56.0, duration=12.0)
    straggler = next(a for a in findings.active if a.key == ("straggler", 201))
    assert straggler.pending
    assert straggler.since == START + 50.0  # when it began, not the report's first poll
    slow = next(a for a in findings.active if a.key == ("straggler", 37))
    assert slow.confirmed and slow.since == START + 20.0
    assert exit_code(findings) == 1  # the confirmed one fails, as on the console
    text = as_text(findings, settings)
    assert "pending   rank 201 (gpu-node-025 GPU 1)  straggler:" in text
    assert "pending 1" in text and "of 20 s)" in text
    document = json.loads(as_json(findings, settings))
    entry = next(a for a in document["anomalies"] if a["kind"] == "straggler" and a["rank"] == 201)
    assert entry["state"] == "pending" and entry["confirm_after_seconds"] == 20


def test_a_job_standing_still_past_its_stall_hold_is_not_healthy_whatever_is_pending():
    findings, settings = report_at(2.0)
    frame = findings.analysis.frame
    hold = settings.detect.job_stall_seconds

    def still_for(seconds: float):
        progress = replace(findings.analysis.progress, still_since=frame.time - seconds)
        return replace(findings, analysis=replace(findings.analysis, progress=progress))

    assert exit_code(still_for(hold - 5)) == 0  # a stall not yet past its hold
    stuck = still_for(hold + 7)
    assert findings.analysis.confirmed == [] and exit_code(stuck) == 1
    document = json.loads(as_json(stuck, settings))
    assert document["healthy"] is False
    assert document["no_progress"] == f"no progress for {hold + 7:.0f} s (a stall may last" \
                                      f" {hold:.0f} s)"
    assert "not healthy: no progress for" in as_text(stuck, settings)
    assert stuck.analysis.verdict_when_clear == ("no progress: not healthy", False)


def test_the_report_groups_as_the_panel_does_each_anomaly_naming_what_explains_it():
    findings, settings = report_at(100.0, duration=40.0)
    document = json.loads(as_json(findings, settings))
    by_key = {(a["kind"], a["rank"]): a for a in document["anomalies"]}
    assert len(by_key) == 5  # nothing folded away: scripts still see every anomaly
    memory = by_key[("memory", 128)]["explained_by"]
    assert (memory["kind"], memory["rank"]) == ("ecc", 128) and "ECC" in memory["why"]
    nvlink = by_key[("nvlink", 296)]["explained_by"]
    assert (nvlink["kind"], nvlink["rank"]) == ("nvlink_errors", 300)
    assert by_key[("ecc", 128)]["explained_by"] is None
    assert by_key[("straggler", 201)]["explained_by"] is None
    lines = as_text(findings, settings).splitlines()
    ecc = next(i for i, line in enumerate(lines) if "rank 128" in line and "ecc:" in line)
    assert lines[ecc + 1].startswith("    ↳ critical  rank 128 (gpu-node-016 GPU 0)  memory:")
    assert lines[ecc + 1].endswith("explained by: ecc")


def test_at_the_hang_every_anomaly_is_kept_each_naming_what_directly_explains_it(tmp_path):
    findings, settings = report_at(176.0, duration=24.0, log_root=tmp_path)
    document = json.loads(as_json(findings, settings))
    causes = {(a["kind"], a["rank"]): a["explained_by"] for a in document["anomalies"]}
    assert {("xid", 455), ("missing", 455), ("hang", 455), ("job_stall", None)} <= set(causes)
    assert (causes[("hang", 455)]["kind"], causes[("hang", 455)]["rank"]) == ("missing", 455)
    stall = causes[("job_stall", None)]
    assert (stall["kind"], stall["rank"]) == ("hang", 455) and "hung" in stall["why"]
    missing = causes[("missing", 455)]
    assert (missing["kind"], missing["rank"]) == ("xid", 455)  # the XID before it died
    assert causes[("xid", 455)] is None  # the root
    text = as_text(findings, settings)
    assert "job stall: SM activity" in text and "explained by: hang on rank 455" in text

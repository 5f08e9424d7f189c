"""The analysis reads the Flight Recorder dumps while the job looks hung: it names the
culprit from the dumps alone (no logs configured), and leaves out an earlier hang's dumps."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ranktop.tui.core.analysis import Analyser
from ranktop.tui.core.model import Health, SourceStatus
from ranktop.tui.flight.watch import FlightDumps
from ranktop.tui.logs.triage_worker import TriageWorker
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.flight_writer import FlightWriter
from ranktop.tui.simulator.scenario import Fault, Scenario

CULPRIT = 6


def hung_job(cause: str = "mismatch") -> SimCluster:
    fault = Fault("collective_hang", CULPRIT, 20.0, 60.0, {"cause": cause, "dumps": "pickle"})
    return SimCluster(2, 4, seed=1, scenario=Scenario("fr", 120.0, 1.12, 1, (fault,)))


def dumps_only(spec: str) -> TriageWorker:
    """A triage of the dumps alone: no logs configured."""
    return TriageWorker(None, dumps=FlightDumps(spec, wait_seconds=30.0).verdict)


def analyse_until(cluster: SimCluster, analyser: Analyser, writer: FlightWriter,
                  start: float, until: float):
    status = SourceStatus("sim", Health.OK, since=0.0)
    analysis, t = None, start
    while t <= until:
        writer.advance(t)  # epoch 0: a dump's date is its simulated time, as frames' are
        analysis = analyser.analyse(cluster.frame_at(t), status, cluster.rank_map)
        if analyser.hang.triage is not None:  # the next poll shows what this one asked for
            assert analyser.hang.triage.wait(30.0)
        t += 2.0
    return analysis


def test_the_dumps_alone_name_the_culprit_once_they_land(tmp_path: Path) -> None:
    cluster = hung_job()
    writer = FlightWriter(cluster, tmp_path, epoch=0.0)
    analyser = Analyser(load_settings(environ={}), "fr",
                        triage=dumps_only(writer.spec))
    before = analyse_until(cluster, analyser, writer, 0.0, 48.0)
    assert before.hang is None  # stuck, but no dump yet: nothing to say
    after = analyse_until(cluster, analyser, writer, 50.0, 70.0)
    hang = after.hang
    assert hang is not None and hang.behind == [CULPRIT] and hang.flight.kind == "mismatch"
    assert any(a.kind == "hang" and a.rank == CULPRIT for a in after.anomalies)


def test_an_earlier_hangs_dumps_are_not_this_hangs_evidence(tmp_path: Path) -> None:
    cluster = hung_job("missing")
    writer = FlightWriter(cluster, tmp_path, epoch=0.0)
    analyse_until(cluster, Analyser(load_settings(environ={}), "fr"), writer, 0.0, 70.0)
    assert any(tmp_path.iterdir())
    # The same hang one loop later, before its own dumps land: last loop's are too old.
    analyser = Analyser(load_settings(environ={}), "fr",
                        triage=dumps_only(writer.spec))
    later = analyse_until(cluster, analyser, _Silent(), 120.0, 168.0)
    assert later.hang is None  # only last loop's dumps, and they are of another hang


class _Silent:
    def advance(self, t: float) -> None:
        """Writes nothing: the ranks have not dumped this time yet."""


def test_started_during_a_hang_it_reads_the_dumps_already_there(tmp_path: Path) -> None:
    cluster = hung_job()
    writer = FlightWriter(cluster, tmp_path, epoch=0.0)
    writer.advance(60.0)  # the dumps landed at ~50 s, before ranktop started
    analyser = Analyser(load_settings(environ={}), "fr",
                        triage=dumps_only(writer.spec))
    hang = analyse_until(cluster, analyser, writer, 62.0, 76.0).hang
    assert hang is not None and hang.behind == [CULPRIT]
    assert hang.flight.written[1] < 62.0


def test_a_stall_soon_after_a_hang_is_not_blamed_on_that_hangs_dumps(tmp_path: Path) -> None:
    # The dumps land at ~45 s; the job recovers at 62 s and a storage stall starts at 66 s,
    # within the clock skew allowed for the dumps' dates: they are still the earlier hang's.
    hang = Fault("collective_hang", CULPRIT, 15.0, 47.0, {"cause": "mismatch", "dumps": "json"})
    stall = Fault("job_stall", None, 66.0, 30.0, {})
    cluster = SimCluster(2, 4, seed=1, scenario=Scenario("fr", 200.0, 1.12, 1, (hang, stall)))
    writer = FlightWriter(cluster, tmp_path, epoch=0.0)
    analyser = Analyser(load_settings(environ={}), "fr", triage=dumps_only(writer.spec))
    during = analyse_until(cluster, analyser, writer, 0.0, 60.0)
    assert during.hang is not None and during.hang.behind == [CULPRIT]
    t, running = 62.0, False
    while t <= 96.0:
        stalled = analyse_until(cluster, analyser, writer, t, t)
        running = running or stalled.progress.moving
        if running:  # once the job keeps stepping, nothing blames the culprit
            assert stalled.hang is None, t  # no evidence of this stall: no verdict
        t += 2.0
    assert running and stalled.progress.stalled(96.0)


def test_a_gap_in_the_step_series_does_not_end_the_hang(tmp_path: Path) -> None:
    cluster = hung_job()  # hung from 20 s to 80 s
    writer = FlightWriter(cluster, tmp_path, epoch=0.0)
    analyser = Analyser(load_settings(environ={}), "fr", triage=dumps_only(writer.spec))
    before = analyse_until(cluster, analyser, writer, 0.0, 70.0)
    assert before.hang is not None and before.hang.behind == [CULPRIT]
    status = SourceStatus("sim", Health.OK, since=0.0)
    frame = cluster.frame_at(72.0)
    gap = replace(frame, job={k: v for k, v in frame.job.items() if k != "step"})
    analyser.analyse(gap, status, cluster.rank_map)  # the step's series blinks
    after = analyser.analyse(cluster.frame_at(74.0), status, cluster.rank_map)
    assert after.progress.step == before.progress.step  # back, and still where it was
    assert after.hang is not None and after.hang.behind == [CULPRIT]
    assert hang_since(after) == hang_since(before)  # the same hang, not a new one


def hang_since(analysis) -> float:
    [hang] = [a for a in analysis.anomalies if a.kind == "hang"]
    return hang.since


def test_the_hang_began_at_the_steps_last_advance_even_after_a_gap(tmp_path: Path) -> None:
    # The step's series is gone from 22 s to 100 s and comes back where it stood: the hang
    # began at ~20 s, and the dumps that landed at ~50 s are its evidence.
    fault = Fault("collective_hang", CULPRIT, 20.0, 200.0, {"cause": "mismatch",
                                                            "dumps": "pickle"})
    cluster = SimCluster(2, 4, seed=1, scenario=Scenario("fr", 300.0, 1.12, 1, (fault,)))
    writer = FlightWriter(cluster, tmp_path, epoch=0.0)
    analyser = Analyser(load_settings(environ={}), "fr", triage=dumps_only(writer.spec))
    status = SourceStatus("sim", Health.OK, since=0.0)
    t = 0.0
    while t <= 100.0:
        writer.advance(t)
        frame = cluster.frame_at(t)
        if t > 20.0:
            frame = replace(frame, job={k: v for k, v in frame.job.items() if k != "step"})
        analyser.analyse(frame, status, cluster.rank_map)
        t += 2.0
    assert any(tmp_path.iterdir())
    after = analyse_until(cluster, analyser, writer, 102.0, 140.0)
    assert after.progress.still_since <= 22.0
    assert after.hang is not None and after.hang.behind == [CULPRIT]

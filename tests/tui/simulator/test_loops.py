"""The simulator runs for ever: every loop of its scenario writes the logs and dumps the
first did, so the verdict on the tenth loop's hang is the first loop's, and its lines are
stamped in wall-clock time (the epoch it was given), not a fixed date."""

from __future__ import annotations

import time
from pathlib import Path

from ranktop.tui.core.hang.flight_triage import analyse_dumps
from ranktop.tui.core.hang.join import join_verdicts
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.flight.reader import read_dumps
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.simulator.flight_writer import FlightWriter
from ranktop.tui.simulator.log_writer import LogWriter

from tests.tui.simulator.test_flight_writer import CULPRIT, SEEN_AT, job

LOOP = 120.0  # the test scenario's loop
EPOCH = 1_795_000_000.0  # the wall-clock time the simulated job began


def verdict_at(writer: LogWriter, cluster) -> tuple:
    rank_map = cluster.rank_map
    logs = RankLogs(writer.layout_spec)
    files = {r: logs.files(rank_map, r)[0] for r in range(len(rank_map))}
    from_logs = triage(lines_by_rank(files, rank_map, 200), len(rank_map), gone=[CULPRIT])
    joined = join_verdicts(from_logs,
                           analyse_dumps(read_dumps(writer.flight_spec, len(rank_map))))
    return joined.sure, joined.behind, joined.disagreement


def written_through(root: Path, cluster, start: float, until: float) -> LogWriter:
    dumps = FlightWriter(cluster, root / "fr", seed=3, epoch=EPOCH)
    writer = LogWriter(cluster, root / "logs", seed=3, flight=dumps, epoch=EPOCH)
    t = start
    while t < until:
        writer.advance(t)
        t += 2.0
    writer.advance(until)
    return writer


def test_the_tenth_loops_hang_is_judged_as_the_first_loops(tmp_path: Path) -> None:
    cluster = job("rank_death", dumps="pickle")
    first = verdict_at(written_through(tmp_path / "one", cluster, 0.0, SEEN_AT), cluster)
    # one writer through ten loops: every loop's logs and dumps, the earlier ones rotated
    # and replaced as they go
    tenth = written_through(tmp_path / "ten", cluster, 0.0, 9 * LOOP + SEEN_AT)
    assert first[:2] == (True, [CULPRIT]) and not first[2]
    assert verdict_at(tenth, cluster) == first


def test_the_lines_are_stamped_in_the_wall_clock_time_they_stand_for(tmp_path: Path) -> None:
    cluster = job("rank_death", dumps="pickle")
    writer = written_through(tmp_path, cluster, 0.0, 3 * LOOP + 10.0)
    day = time.strftime("%Y-%m-%d", time.gmtime(EPOCH + 3 * LOOP))
    newest = max((p for p in (tmp_path / "logs").rglob("*") if p.is_file()),
                 key=lambda p: p.stat().st_mtime)
    assert day in newest.read_text() and "2026-03-14" not in newest.read_text()
    assert writer.flight_spec

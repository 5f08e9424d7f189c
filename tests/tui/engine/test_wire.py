"""What crosses from an engine process per poll: only what changed, and what the UI puts
back is what the engine had."""

from __future__ import annotations

import math
from multiprocessing.reduction import ForkingPickler

from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.model import Frame, Health, RankMap, SourceStatus
from ranktop.tui.engine.snapshot import Snapshot
from ranktop.tui.engine.wire import UNCHANGED_RANKS, Received, Sent

RANKS = RankMap.grid([f"h{n}" for n in range(128)], 8, "test")
STATUS = SourceStatus("test", Health.OK, since=0.0)


def snapshot(version: int, temperature: list[float], xid: list[float]) -> Snapshot:
    frame = Frame(time=float(version), values={"temperature": temperature, "xid": xid})
    return Snapshot(version, Analysis(STATUS, RANKS, frame), 0)


def crossed(value: Snapshot) -> Snapshot:
    return ForkingPickler.loads(ForkingPickler.dumps(value))


def test_a_metric_that_did_not_change_and_the_rank_map_are_sent_once():
    sent, received = Sent(), Received()
    n = len(RANKS)
    hot = [60.0 + (r % 7) * 0.5 for r in range(n)]
    quiet = [0.0] * n
    quiet[37] = 79.0
    first = crossed(sent.compact(snapshot(1, hot, quiet)))
    second = crossed(sent.compact(snapshot(2, [t + 1.0 for t in hot], list(quiet))))
    assert first.analysis.frame.values["xid"] is not None
    assert second.analysis.frame.values["xid"] is None  # the UI has it
    assert second.analysis.rank_map == UNCHANGED_RANKS
    assert len(ForkingPickler.dumps(second)) < len(ForkingPickler.dumps(first)) / 2
    received.unpack(first)
    back = received.unpack(second).analysis
    assert back.rank_map == RANKS
    assert back.frame.value("xid", 37) == 79.0
    assert back.frame.value("temperature", 5) == hot[5] + 1.0


def test_values_cross_to_seven_digits_and_no_data_stays_no_data():
    sent, received = Sent(), Received()
    n = len(RANKS)
    values = [1234567.0 * (r + 1) for r in range(n)]
    values[3] = math.nan
    back = received.unpack(crossed(sent.compact(snapshot(1, values, [0.0] * n))))
    frame = back.analysis.frame
    assert math.isnan(frame.value("temperature", 3))
    assert all(math.isclose(frame.value("temperature", r), values[r], rel_tol=1e-7)
               for r in range(n) if r != 3)

"""A sharded backend's partial answers through the analysis: the ranks a stopped shard holds
are not answered, not gone. No missing, never-seen, hang or restart verdict comes from their
absence; what was known of them holds; a fault on the answered half is still found; when the
shard is back they return without a death on record, and the log says the outage once."""

from __future__ import annotations

import math
from dataclasses import replace

from ranktop.tui.core.analysis import Analyser
from ranktop.tui.core.events import EventLog
from ranktop.tui.core.journal import PARTIAL_KIND
from ranktop.tui.core.model import Frame, Health, SourceStatus
from ranktop.tui.settings.config import load_settings

from tests.tui.core.detect.test_detectors import RANK_MAP, N, healthy

POLL = 2.0
SHARD_B = frozenset(range(N // 2, N))  # the ranks the stopped shard holds
OUT_AT, BACK_AT, END = 60.0, 180.0, 240.0
REASON = ("remote_read: error sending request: Post \"http://127.0.0.1:9091/api/v1/read\": "
          "dial tcp 127.0.0.1:9091: connect: connection refused")


def frame_at(t: float, hot: dict[int, float]) -> Frame:
    """The job stepping every poll, ``hot`` ranks over 90 °C and throttling; while the
    shard is out its ranks' series are absent and the answer is partial."""
    frame = healthy(t, temperature=hot, throttle_reasons=dict.fromkeys(hot, 32.0),
                    job={"step": 1000 + t / POLL})
    if not OUT_AT <= t < BACK_AT:
        return frame
    values = {m: [math.nan if r in SHARD_B else v for r, v in enumerate(vs)]
              for m, vs in frame.values.items()}
    return replace(frame, values=values, unknown=SHARD_B)


def status_at(t: float) -> SourceStatus:
    partial = (REASON,) if OUT_AT <= t < BACK_AT else ()
    return SourceStatus("prometheus", Health.SLOW if partial else Health.OK, since=0.0,
                        partial=partial)


def run(tmp_path, hot_from: dict[int, float]):
    """Every poll's analysis; ``hot_from``: each hot rank and when it began."""
    log = EventLog(tmp_path / "events.jsonl")
    analyser = Analyser(load_settings(environ={}), "j", log)
    analyses = []
    t = 0.0
    while t <= END:
        hot = {rank: 92.0 for rank, since in hot_from.items() if t >= since}
        analyses.append(analyser.analyse(frame_at(t, hot), status_at(t), RANK_MAP))
        t += POLL
    return analyses, log


def during(analyses, start: float, end: float):
    return [a for a in analyses if start <= a.frame.time < end]


def test_no_verdict_is_started_on_ranks_a_partial_answer_left_out(tmp_path):
    analyses, _ = run(tmp_path, {})
    for analysis in during(analyses, OUT_AT, END + 1):
        kinds = {a.kind for a in analysis.anomalies}
        assert not kinds & {"missing", "never_seen", "hang"}, (analysis.frame.time, kinds)
        assert analysis.down == [] and analysis.restarts == ()
    outage = during(analyses, OUT_AT, BACK_AT)
    assert all(a.unknown == SHARD_B and a.ranks_up == N // 2 for a in outage)
    assert analyses[-1].ranks_up == N and analyses[-1].unknown == frozenset()


def test_a_confirmed_fault_behind_the_stopped_shard_holds_as_it_was(tmp_path):
    analyses, _ = run(tmp_path, {20: 0.0})
    before = next(a for a in during(analyses, OUT_AT - POLL, OUT_AT)[0].anomalies
                  if a.kind == "thermal")
    assert before.rank == 20 and before.confirmed
    for analysis in during(analyses, OUT_AT, BACK_AT):
        (held,) = [a for a in analysis.anomalies if a.kind == "thermal"]
        assert held.confirmed and held.since == before.since and held.unseen_since == OUT_AT
    after = [a for a in analyses[-1].anomalies if a.kind == "thermal"]
    assert len(after) == 1 and after[0].since == before.since and after[0].unseen_since is None


def test_a_fault_on_the_answered_half_is_found_during_the_outage(tmp_path):
    began = OUT_AT + 20.0
    analyses, _ = run(tmp_path, {3: began})
    first = next(a for a in analyses if any(x.kind == "thermal" for x in a.anomalies))
    assert first.frame.time == began  # shown the poll it holds, pending
    hold = load_settings(environ={}).detect.thermal_seconds
    confirmed = next(a for a in analyses
                     if any(x.kind == "thermal" and x.confirmed for x in a.anomalies))
    assert confirmed.frame.time <= began + hold + POLL


def test_the_outage_is_logged_once_when_it_begins_and_once_when_it_ends(tmp_path):
    _, log = run(tmp_path, {})
    events = [e for e in log.read() if e.kind == PARTIAL_KIND]
    assert [(e.state, e.time) for e in events] == [("start", OUT_AT), ("resolve", BACK_AT)]
    assert "127.0.0.1:9091" in events[0].summary
    assert not [e for e in log.read() if e.kind in ("missing", "hang")]

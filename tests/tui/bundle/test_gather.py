"""What a bundle keeps of a rank: a log tail that reaches back, into the rotated file, to
when the rank's trouble began; alerts of the hour before the moment only."""

from __future__ import annotations

import time
from pathlib import Path

from ranktop.tui.bundle.gather import LOG_LINES_SAVED, reaching
from ranktop.tui.core.events import Event, EventLog
from ranktop.tui.core.model import Rank
from ranktop.tui.engine.rank_data import RankData
from ranktop.tui.logs.merged import MergedLog
from ranktop.tui.logs.tail import FileLog
from ranktop.tui.settings.config import load_settings

CRASH = "NCCL WARN Cuda failure 'unspecified launch failure'"
RANK = Rank(rank=455, host="gpu-node-056", gpu=7, node=56)


def stamp(epoch: float) -> str:
    """A line's head as the job writes it: the node's local time, no zone."""
    return time.strftime("[%Y-%m-%d %H:%M:%S]", time.localtime(epoch))


def rotated_crash(folder: Path, died: float, chatter: int) -> Path:
    """stderr.log.1 ending in the crash at ``died``; stderr.log holding ``chatter`` lines of
    the restarted process, written after it."""
    older = [f"{stamp(died - 600 + s)} step {s}" for s in range(0, 600, 20)]
    (folder / "stderr.log.1").write_text("\n".join([*older, f"{stamp(died)} {CRASH}",
                                                    "terminate called"]) + "\n")
    restarted = [f"{stamp(died + 60 + i / 10)} NCCL INFO restarted line {i}"
                 for i in range(chatter)]
    current = folder / "stderr.log"
    current.write_text("\n".join(restarted) + "\n")
    return current


def texts(lines) -> list[str]:
    return [line.text for line in lines]


def test_the_tail_reaches_into_the_rotated_file_for_the_crash(tmp_path):
    died = time.time() - 3600
    current = rotated_crash(tmp_path, died, chatter=1500)
    plain = texts(FileLog(current).tail(LOG_LINES_SAVED))
    assert not any(CRASH in text for text in plain)  # the newest lines alone lack it
    kept = texts(reaching(FileLog(current), since=died - 2))
    crash = next(i for i, text in enumerate(kept) if CRASH in text)
    assert "step" in kept[crash - 1]  # what led up to it, too
    assert kept[-1].endswith("restarted line 1499")  # and the newest
    assert any("lines left out, up to the newest" in text for text in kept)
    assert len(kept) <= LOG_LINES_SAVED + 1


def test_a_merged_log_reaches_back_the_same_way(tmp_path):
    died = time.time() - 3600
    current = rotated_crash(tmp_path, died, chatter=700)
    kept = texts(reaching(MergedLog([FileLog(current)]), since=died))
    assert any(CRASH in text for text in kept) and kept[-1].endswith("restarted line 699")


def test_without_trouble_or_with_a_short_log_the_tail_is_the_newest_lines(tmp_path):
    died = time.time() - 3600
    current = rotated_crash(tmp_path, died, chatter=1500)
    assert texts(reaching(FileLog(current), None)) == texts(FileLog(current).tail(300))
    short = rotated_crash(tmp_path, died, chatter=5)
    kept = texts(reaching(FileLog(short), died))
    assert any(CRASH in text for text in kept) and len(kept) < LOG_LINES_SAVED


def event(at: float, kind: str) -> Event:
    return Event(at, "start", kind, "critical", RANK.rank, RANK.host, RANK.gpu, "job",
                 f"{kind} began")


def test_alerts_that_began_after_the_moment_are_left_out_and_counted(tmp_path):
    moment = time.time() - 600
    log = EventLog(tmp_path / "events.jsonl")
    log.append([event(moment - 100, "xid"), event(moment - 5, "missing"),
                event(moment + 30, "restart"), event(moment + 200, "straggler")])
    data = RankData(load_settings(environ={}), "job", log)
    rows, note = data.alert_rows(RANK, until=moment)
    assert [row[1] for row in rows] == ["missing", "xid"]
    assert note.startswith("2 in the hour before the moment; 2 that began after the moment "
                           "left out")
    live, live_note = data.alert_rows(RANK)
    assert len(live) == 4 and live_note.startswith("4 in the last hour")

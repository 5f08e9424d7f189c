"""A console started in the middle of the incident (`ranktop --demo --demo-start N`): the
demo's frame, its history and its ranks' logs must all tell the same story."""

from __future__ import annotations

import asyncio
import calendar
import json
import re
from pathlib import Path

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.settings.config import DemoSettings
from ranktop.tui.sources.demo import DemoSource, demo_source

START = 1_800_000_000.0
DEAD = 455 % 16  # the scenario's ranks wrap onto a 4 x 4 cluster
FATAL = "terminate called after throwing an instance of 'c10::DistBackendError'\n"
WARN_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] .* NCCL WARN Cuda failure", re.M)


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def started_at(at: float, folder: Path) -> DemoSource:
    """The demo as `--demo-start at` makes it, polled once, its logs written."""
    source = demo_source(DemoSettings(4, 4, seed=7), FakeClock(START + at), started=START,
                         log_root=folder)
    asyncio.run(source.poll())
    source.flush_logs()
    return source


def read(source: DemoSource, rank: int, name: str) -> str:
    place = source.rank_map.ranks[rank]
    (attempt,) = (source.log_writer.root / place.host).glob("*/attempt_0")
    path = attempt / str(place.gpu) / name
    return path.read_text() if path.exists() else ""


@pytest.fixture(scope="module")
def at_190(tmp_path_factory) -> DemoSource:
    return started_at(190.0, tmp_path_factory.mktemp("logs"))


def test_the_dead_rank_is_already_missing_and_the_job_frozen(at_190: DemoSource) -> None:
    frame = at_190.cluster.frame_at(190.0)
    assert frame.ranks_up(16) == [r != DEAD for r in range(16)]
    assert frame.job["tokens_per_s"] == 0
    assert frame.job["step"] == at_190.cluster.frame_at(173.0).job["step"]


def test_its_history_ends_when_it_died(at_190: DemoSource) -> None:
    history = at_190.backfill(DEAD, ["temperature", "step_time"], 600.0, 4.0)
    points = history["temperature"]
    assert START <= points[0].time < START + 4  # nothing from before the demo began
    alive = [p for p in points if p.time - START < 172]
    dead = [p for p in points if p.time - START >= 172]
    assert alive and all(p.value == p.value for p in alive)
    assert dead and all(p.value != p.value for p in dead)
    # the others' step time froze when it died, at the value the frame shows now
    others = at_190.backfill(0, ["step_time"], 20.0, 4.0)["step_time"]
    frozen = at_190.cluster.frame_at(190.0).values["step_time"][0]
    assert [p.value for p in others if p.time - START >= 173] == [frozen] * 4


def test_its_log_already_ends_with_its_fatal_error(at_190: DemoSource) -> None:
    text = read(at_190, DEAD, "stderr.log")
    assert text.endswith(FATAL)
    assert "Cuda failure 'unspecified launch failure'" in text
    # the log's clock is the console's: the error is stamped 170 s after the demo began
    (stamp,) = WARN_STAMP.findall(text)
    logged = calendar.timegm((*map(int, re.split(r"[- :]", stamp)), 0, 0, 0))
    assert logged == int(START + 170)


def test_at_190_s_the_others_are_still_waiting_for_their_watchdog(at_190: DemoSource) -> None:
    # The watchdogs fire 30 s into the hang (~202 s): no timeout is logged yet.
    assert not any("Watchdog caught" in read(at_190, r, "stderr.log") for r in range(16))


def test_started_later_the_watchdogs_are_there_and_triage_names_the_dead_rank(tmp_path):
    source = started_at(205.0, tmp_path)
    texts = {r: read(source, r, "stderr.log") for r in range(16)}
    assert all(("Watchdog caught" in t) == (r != DEAD) for r, t in texts.items())
    verdict = triage({r: t.splitlines() for r, t in texts.items()}, world_size=16)
    assert verdict is not None and verdict.behind == [DEAD]


def test_started_after_logrotate_the_fatal_error_is_in_the_rotated_file(tmp_path):
    source = started_at(218.0, tmp_path)
    assert read(source, DEAD, "stderr.log") == ""
    assert read(source, DEAD, "stderr.log.1").endswith(FATAL)
    rotated = [r for r in range(16) if read(source, r, "stderr.log.1")]
    assert all("Watchdog caught" in read(source, r, "stderr.log.1")
               for r in rotated if r != DEAD)


def test_report_started_mid_incident_counts_the_dead_rank(capsys):
    code = main(["report", "--demo", "--demo-start", "190", "--nodes", "64", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["ranks"] == {"total": 512, "up": 511, "missing": [455], "not_answered": []}

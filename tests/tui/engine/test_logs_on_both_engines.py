"""A rank's log reads the same through either engine: opened, tailed, followed and rotated
in the engine's own process (a page at a time over the pipe) as in the UI's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ranktop.tui.engine.process import ProcessEngine
from ranktop.tui.engine.remote_log import PAGE_BYTES, RemoteLog
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import load_settings

from tests.tui.engine.test_process import demo_at_40

RANK = 5


def write(path: Path, lines: list[str]) -> None:
    with path.open("a") as log:
        log.writelines(f"{line}\n" for line in lines)


def stamped(start: int, count: int, what: str) -> list[str]:
    return [f"2026-11-25 0{(start + i) // 3600}:{(start + i) // 60 % 60:02d}:"
            f"{(start + i) % 60:02d} {what} {i}" for i in range(count)]


def test_a_ranks_log_reads_the_same_through_either_engine(tmp_path):
    err, out = tmp_path / f"rank{RANK}.err.log", tmp_path / f"rank{RANK}.out.log"
    write(err, stamped(0, 500, "step"))
    write(out, stamped(250, 40, "NCCL WARN ✗ timeout"))
    settings = replace(load_settings(environ={}), log_spec=str(tmp_path / "rank{rank}.*.log"))
    local = ThreadEngine(settings, demo_at_40(settings))
    apart = ProcessEngine(settings, demo_at_40)
    try:
        rank_map = local.latest.analysis.rank_map
        assert apart.latest.analysis.rank_map == rank_map
        (here,), note = local.open_logs(rank_map, RANK)
        (there,), remote_note = apart.open_logs(rank_map, RANK)
        assert isinstance(there, RemoteLog) and (there.name, remote_note) == (here.name, note)
        tail = there.tail(300)
        assert tail == here.tail(300) and len(tail) == 340
        assert there.follow() == here.follow() == []

        write(out, stamped(2000, 9000, "flood " + "x" * 60))  # pages of the pipe's
        followed = there.follow()
        assert followed == here.follow()
        assert sum(len(line.text) for line in followed) > 2 * PAGE_BYTES

        err.rename(tmp_path / f"rank{RANK}.err.log.1")
        write(err, stamped(12000, 3, "restarted"))
        assert there.follow() == here.follow()
        assert there.status() == here.status() != ""
        (here,), _ = local.open_logs(rank_map, RANK)  # as a rank screen opened now
        (there,), _ = apart.open_logs(rank_map, RANK)
        tail = there.tail(300)
        assert tail == here.tail(300)
        assert any("before rank5.err.log was rotated" in line.text for line in tail)
        there.close()
        here.close()
    finally:
        apart.close()
        local.close()

"""The hang evidence screen says what ranktop could not read (no log configured, no file for
the rank), never that a rank logged nothing."""

from __future__ import annotations

import re

from ranktop.tui.core.hang.flight_triage import FlightVerdict
from ranktop.tui.core.hang.triage import HangVerdict
from ranktop.tui.core.hang.watch import TriageAsk
from ranktop.tui.logs.triage_worker import TriageWorker
from ranktop.tui.screens.evidence import EvidenceScreen

from tests.tui.conftest import make_app, screen_text

DUMPS = FlightVerdict("missing", (3,), group="pg 0", group_size=8, seq=41,
                      op="nccl:all_reduce", waiting=(0, 1, 2, 4, 5, 6, 7),
                      evidence={3: ("never joined nccl:all_reduce SeqNum 41",)},
                      summary="rank 3 never joined nccl:all_reduce SeqNum 41")


async def shown(verdict: HangVerdict) -> str:
    """The screen's words, wrapped lines joined (box lines and runs of spaces as one space)."""
    app = make_app(nodes=1, gpus=8)
    async with app.run_test(size=(160, 50)) as pilot:
        await app.poll_once()
        app.push_screen(EvidenceScreen(verdict, app.cluster.rank_map))
        await pilot.pause()
        return re.sub(r"[\s│╭╮╰╯─]+", " ", screen_text(app))


async def test_with_no_log_configured_the_screen_says_so() -> None:
    worker = TriageWorker(None, dumps=lambda world, since, until: DUMPS)  # no --logs, only dumps
    verdict = worker.run(TriageAsk(1, 10.0, make_app(nodes=1, gpus=8).cluster.rank_map)).verdict
    assert verdict is not None and verdict.behind == [3]
    text = await shown(verdict)
    assert "logged nothing" not in text
    assert "(no log configured: --logs PATTERN)" in text
    assert verdict.summary.endswith("; no log configured (--logs PATTERN): no rank's log was"
                                    " read")  # the screen's first line


async def test_a_rank_whose_file_was_not_found_is_told_to_check_the_pattern() -> None:
    from ranktop.tui.core.hang.log_gaps import LogGaps
    verdict = HangVerdict(reporting=[0, 1], silent=[], behind=[3], last_completed={},
                          evidence={0: ["[rank0]: timed out"]}, summary="rank 3 is dead",
                          dead=[3], log_gaps=LogGaps(True, "/logs/rank{rank}.log", (3,)))
    text = await shown(verdict)
    assert "(no log file found for this rank: check the pattern with" in text
    assert "ranktop check-config --logs '/logs/rank{rank}.log'" in text
    assert "logged nothing" not in text

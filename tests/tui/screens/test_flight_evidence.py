"""The hang evidence screen shows what the Flight Recorder dumps say, as plain text: strings
from a dump (call sites, group names) are neither markup nor terminal controls."""

from __future__ import annotations

from ranktop.tui.core.hang.flight_triage import FlightVerdict
from ranktop.tui.core.hang.triage import HangVerdict
from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.screens.flight_lines import flight_text
from rich.style import Style

from tests.tui.conftest import make_app, screen_text

MARKUP = "[@click=app.quit]x[/]"
SITE = f"{MARKUP}/train.py:9 in step\x1b[2J"


def verdict() -> FlightVerdict:
    return FlightVerdict(
        "mismatch", (3,), group=f"pg 0 ({MARKUP})", group_size=8, seq=41,
        op="nccl:all_reduce", sizes="[512] Float", call_site=SITE,
        waiting_call_site="train.py:143 in sync_gradients", waiting=(0, 1, 2),
        missing_dumps=(7,), unreadable={6: "comm_lib_trace_rank_6: not a readable pickle"},
        evidence={3: ("started nccl:all_reduce SeqNum 41 of pg 0: [512] Float",)},
        summary=f"rank 3 entered nccl:all_reduce SeqNum 41 with other sizes {MARKUP}",
        notes=("looked at the newest 20000 entries of each dump",))


def test_the_section_names_culprit_group_collective_and_call_site_as_text() -> None:
    text = flight_text(verdict(), lambda r: f"rank {r}", lambda role: Style())
    plain = text.plain
    assert "Flight Recorder dumps" in plain
    assert "culprits   3" in plain and "collective nccl:all_reduce SeqNum 41" in plain
    assert f"culprit at {MARKUP}/train.py:9 in step\ufffd[2J" in plain  # ESC shown, inert
    assert "\x1b" not in plain
    assert "no dump    7" in plain and "unreadable rank 6: comm_lib_trace_rank_6" in plain
    assert "rank 3  (culprit)" in plain and "looked at the newest" in plain


def test_what_does_not_fit_is_counted_never_dropped_silently() -> None:
    from dataclasses import replace
    many = replace(verdict(), unreadable={r: "not a readable pickle" for r in range(10, 20)},
                   downstream=tuple(f"pg {g}" for g in range(1, 8)),
                   evidence={r: ("waits in SeqNum 41",) for r in range(12)})
    plain = flight_text(many, lambda r: f"rank {r}", lambda role: Style()).plain
    assert "… and 6 more unreadable dumps" in plain
    assert "pg 4; … and 3 more" in plain
    assert "… and 4 more ranks with evidence" in plain


async def test_the_evidence_screen_shows_the_dumps_section() -> None:
    app = make_app(nodes=1, gpus=8)
    hang = HangVerdict(reporting=[0, 1, 2], silent=[], behind=[3], last_completed={},
                       evidence={}, summary="Flight Recorder: rank 3 ...", flight=verdict(),
                       disagreement="the logs blame rank 5; the Flight Recorder dumps blame"
                                    " rank 3")
    async with app.run_test(size=(140, 50)) as pilot:
        await app.poll_once()
        app.push_screen(EvidenceScreen(hang, app.cluster.rank_map))
        await pilot.pause()
        text = screen_text(app)
        assert "Flight Recorder dumps" in text and MARKUP in text
        assert "The witnesses disagree: the logs blame rank 5" in text
        assert "gpu-node-000 GPU 3" in text or "rank 3" in text
        assert app.is_running

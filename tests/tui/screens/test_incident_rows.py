"""One rank's faults on one row: the demo's hot GPU with the straggling it causes, the ECC
error with its row remap; `n` visits roots, and what is folded stays named and reachable."""

from __future__ import annotations

from tests.tui.conftest import make_app, screen_text, triage_done


async def watched(app, pilot, polls: int) -> None:
    """``polls`` polls two seconds apart, as the console makes them, each poll's hang triage
    finished before the next."""
    for _ in range(polls):
        await app.poll_once()
        await triage_done(app)
        await pilot.pause()
        app.clock.now += 2.0
    await pilot.pause()


def panel_rows(app, rank: int) -> list[str]:
    return [line for line in screen_text(app).splitlines() if f"rank {rank} gpu-node" in line
            and ("●" in line or "◌" in line)]


async def test_the_hot_gpu_and_the_straggling_it_causes_are_one_row():
    app = make_app(at=20.0)  # rank 37 throttles from 6 s and slows its rank
    async with app.run_test(size=(160, 50)) as pilot:
        await watched(app, pilot, 12)
        kinds = {a.kind for a in app.analysis.anomalies if a.rank == 37}
        assert kinds == {"thermal", "straggler"}
        (row,) = panel_rows(app, 37)
        assert "● critical" in row  # the straggling it causes is critical
        assert "thermal → straggler 1." in row and "x: GPU 8" in row
        await pilot.press("n", "enter")  # the folded straggler's own text: on its rank's screen
        await pilot.pause()
        assert "rank 37  gpu-node-004" in screen_text(app)
        assert "straggler: compute 1." in screen_text(app)


async def test_the_ecc_error_and_its_row_remap_are_one_row_and_n_visits_roots_only():
    app = make_app(at=128.0)  # one uncorrectable ECC error on rank 128 at 130 s
    async with app.run_test(size=(160, 50)) as pilot:
        await watched(app, pilot, 4)
        kinds = {a.kind for a in app.analysis.anomalies if a.rank == 128}
        assert kinds == {"ecc", "memory"}
        (row,) = panel_rows(app, 128)
        assert "ecc → memory +1: 1 uncorrectable (double-bit) ECC error" in row
        roots = app.analysis.incidents
        assert len(roots) < len(app.analysis.anomalies)
        visited = []
        for _ in roots:
            await pilot.press("n")
            visited.append(app.cluster.cursor)
        assert visited == [incident.rank for incident in roots]
        await pilot.press("n")  # round again to the first root
        assert app.cluster.cursor == roots[0].rank


async def test_the_demos_hang_is_one_row_on_the_dead_rank_with_its_consequences_folded(
        tmp_path):
    app = make_app(at=174.0, log_root=tmp_path)  # rank 455 died at 172 s: the others wait
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 20)
        kinds = {(a.kind, a.rank) for a in app.analysis.anomalies}
        assert {("hang", 455), ("missing", 455), ("job_stall", None),
                ("throughput", None)} <= kinds
        (row,) = panel_rows(app, 455)
        assert "● critical" in row
        assert all(name in row for name in ("missing", "hang", "job stall", "throughput"))
        assert "the whole job" not in screen_text(app)  # folded, not rows of their own
        assert "more below" not in screen_text(app)  # the worst moment fits at 120x40
        await pilot.press("n")  # the critical root first
        assert app.cluster.cursor == 455

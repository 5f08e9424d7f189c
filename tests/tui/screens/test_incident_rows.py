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


def header_counts(app) -> dict[str, int]:
    """The header's counts by name: {"critical": 2, "major": 1, "folded": 5}."""
    words = screen_text(app).splitlines()[0].replace("(", " ").replace(")", " ").split()
    names = ("critical", "major", "warning", "pending", "resolved", "folded")
    return {name: int(words[i - 1]) for i, name in enumerate(words)
            if name in names and words[i - 1].isdigit()}


def every_row(app) -> list[str]:
    return [line for line in screen_text(app).splitlines()
            if line.lstrip().startswith(("● ", "◌ ", "✓ "))]


async def test_the_headers_counts_are_the_panels_rows_and_say_how_many_are_folded(tmp_path):
    app = make_app(at=190.0, log_root=tmp_path)  # the XID's rank dead, the job hung
    async with app.run_test(size=(160, 50)) as pilot:
        await watched(app, pilot, 8)
        counts = header_counts(app)
        rows = every_row(app)
        folded = counts.pop("folded")
        assert sum(counts.values()) == len(rows) == len(app.cluster.incidents) >= 2
        for severity in ("critical", "major"):
            assert counts.get(severity, 0) == sum(f"● {severity}" in row for row in rows)
        assert folded == len(app.analysis.anomalies) - len(app.analysis.incidents) > 0
        title = next(line for line in screen_text(app).splitlines() if "anomalies (" in line)
        assert f"{folded} folded" in title


async def test_a_critical_watch_says_why_it_is_critical():
    app = make_app(at=20.0)  # rank 37's heat slows its rank past the critical bar
    async with app.run_test(size=(160, 50)) as pilot:
        await watched(app, pilot, 12)
        (row,) = panel_rows(app, 37)
        assert "● critical" in row
        assert "⇒ watch: it slows the whole job ·" in row


async def test_the_rank_screen_lists_the_cause_above_what_it_explains_each_once():
    app = make_app(at=20.0)
    async with app.run_test(size=(160, 50)) as pilot:
        await watched(app, pilot, 12)
        await pilot.press("n", "enter")
        await pilot.pause()
        text = screen_text(app)
        assert text.index("thermal: GPU") < text.index("straggler: compute")
        assert "(confirmed: HW thermal slowdown is set)" in " ".join(text.split())


async def test_the_rank_screen_says_a_counter_its_anomaly_names_once():
    app = make_app(at=128.0)  # one uncorrectable ECC error on rank 128 at 130 s
    async with app.run_test(size=(160, 50)) as pilot:
        await watched(app, pilot, 4)
        await pilot.press("n", "enter")
        await pilot.pause()
        assert app.screen.rank == 128
        assert screen_text(app).count("row(s) remapped +1") == 1

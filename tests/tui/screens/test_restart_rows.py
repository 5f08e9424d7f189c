"""A restart on the anomaly panel, driven with real keys on the demo: once the job is back
after rank 455's death, a resolved row says who died, when, from which step the job
restarted and what it cost; the XID 79 keeps its row and its drain; `s` on the restart's
row goes to the death, `x` takes the row off the panel."""

from __future__ import annotations

from ranktop.tui.core.detect.restarts import KIND

from tests.tui.conftest import START, make_app, triage_done

DYING_RANK = 455  # the demo's GPU falls off the bus at 170 s, its rank dies at 172 s
BACK_AT = 220.0  # ... and the job is back
STEP = 4.0


async def polled(app, pilot, since: float, until: float) -> None:
    app.clock.now = START + since
    while app.clock.now <= START + until:
        await app.poll_once()
        await triage_done(app)
        await pilot.pause()
        app.clock.now += STEP
    app.clock.now -= STEP


def restart_rows(app) -> list[int]:
    return [index for index, incident in enumerate(app.cluster.incidents)
            if incident.root.kind == KIND]


async def test_a_restart_is_a_resolved_row_and_the_xid_keeps_its_drain(tmp_path):
    app = make_app(at=166.0, log_root=tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await polled(app, pilot, 166.0, BACK_AT + 10)
        assert app.cluster.analysis.ranks_up == len(app.cluster.rank_map)  # the job is back
        (row,) = restart_rows(app)
        text = app.cluster._describe(app.cluster.incidents[row])
        assert text.startswith(f"✓ resolved · rank {DYING_RANK} ")
        assert f"rank {DYING_RANK} died (XID 79: GPU has fallen off the bus) at" in text
        assert "the job restarted from step" in text and "(attempt 1)" in text
        xid = next(i for i in app.cluster.incidents if i.root.kind == "xid"
                   and i.rank == DYING_RANK)
        assert app.cluster._describe(xid).startswith("⇒ drain the node · ")
        assert "(before the restart)" in xid.root.summary
        died = app.cluster.analysis.restarts[0].died
        while app.cluster.current_incident != row:
            await pilot.press("n")
        await pilot.press("s")
        await _replayed(app, pilot)
        assert died <= app.moment < died + STEP


async def test_x_takes_a_restarts_row_off_the_panel(tmp_path):
    app = make_app(at=166.0, log_root=tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await polled(app, pilot, 166.0, BACK_AT + 6)
        (row,) = restart_rows(app)
        while app.cluster.current_incident != row:
            await pilot.press("n")
        await pilot.press("x")
        assert restart_rows(app) == []
        await polled(app, pilot, BACK_AT + 10, BACK_AT + 10)
        assert restart_rows(app) == []  # and it stays off


async def _replayed(app, pilot) -> None:
    workers = [w for w in app.workers if w.group in ("moment", "live")
               and not w.is_cancelled]
    if workers:
        await app.workers.wait_for_complete(workers)
    await pilot.pause()

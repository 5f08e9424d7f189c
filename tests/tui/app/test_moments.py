"""Past moments on screen, driven with real keys on the demo and a fake clock: stepping
back to a moment shows what the console showed live then, the header says so, and L (or a
step past now) comes back to live."""

from __future__ import annotations

import asyncio

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.core.events import EventLog
from ranktop.tui.core.moment import shown, shown_zoned
from ranktop.tui.core.moment import shown as clock_time
from ranktop.tui.engine.process import ProcessEngine
from ranktop.tui.engine.replay import NothingThen
from ranktop.tui.logs.line_time import first_after
from ranktop.tui.screens.moment_prompt import MomentPrompt
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import DemoSettings, Settings, load_settings
from ranktop.tui.sources.demo import DemoSource, demo_source
from ranktop.widgets.log_view import LogView

from tests.tui.conftest import START, FakeClock, make_app, screen_text, triage_done
from tests.tui.ended_job import EndedJob

DYING_RANK = 455  # dies ~172 s into the demo's scenario; the others hang behind it
SEEN_AT = 180.0  # a few polls after the death
LIVE_UNTIL = 190.0
STEP = 2.0  # the demo's refresh


async def polled(app, pilot, since: float, until: float) -> dict[float, str]:
    """Poll the demo every refresh from ``since`` to ``until`` seconds into the scenario;
    the dying rank's row of the anomaly panel at each poll."""
    rows = {}
    app.clock.now = START + since
    while app.clock.now <= START + until:
        await app.poll_once()
        await triage_done(app)
        await pilot.pause()
        rows[app.clock.now - START] = row_of(app, DYING_RANK)
        app.clock.now += STEP
    app.clock.now -= STEP
    return rows


def row_of(app, rank: int) -> str:
    """The anomaly panel's row of ``rank``'s incident ("" when it has none)."""
    cluster = app.cluster
    return next((cluster._describe(i) for i in cluster.incidents if i.rank == rank), "")


def header(app) -> str:
    return "\n".join(screen_text(app).splitlines()[:2])


MOMENT_WORKERS = ("moment", "live", "rank-moment")  # not the rank screen's log, which follows


async def replayed(app, pilot, groups: tuple[str, ...] = MOMENT_WORKERS) -> None:
    """Once the moments asked for are replayed and shown (or the work of ``groups`` done)."""
    workers = [w for w in app.workers if w.group in groups and not w.is_cancelled]
    if workers:  # (none: Textual would wait for every worker)
        await app.workers.wait_for_complete(workers)
    await pilot.pause()


def said(app) -> list[str]:
    """What the app notifies, kept."""
    messages: list[str] = []
    app.notify = lambda message, **_: messages.append(message)
    return messages


async def test_stepping_back_shows_the_verdict_the_panel_showed_live_then(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        live = await polled(app, pilot, 170.0, LIVE_UNTIL)
        assert "XID 79" in live[SEEN_AT]
        assert "● ok" in header(app) and "data " in header(app)
        steps = int((LIVE_UNTIL - SEEN_AT) / STEP)
        await pilot.press(*["comma"] * steps)
        await replayed(app, pilot)
        assert app.moment == START + SEEN_AT
        assert row_of(app, DYING_RANK) == live[SEEN_AT]
        top = header(app)
        assert f"AT {shown_zoned(START + SEEN_AT)} · 10 s ago · press L for live" in top
        assert "● ok" not in top and "data " not in top  # nothing claims to be current
        app.clock.now += STEP  # a poll goes on behind and is not shown
        await app.poll_once()
        await pilot.pause()
        assert row_of(app, DYING_RANK) == live[SEEN_AT]
        assert "12 s ago" in header(app)
        await pilot.press("L")
        await pilot.pause()
        assert app.moment is None
        assert "AT " not in header(app) and "● ok" in header(app)
        assert app.cluster.analysis is app.analysis


async def test_a_step_forward_past_the_newest_poll_is_live_again(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        await pilot.press("comma", "comma", "full_stop")  # keys add up while replaying
        await replayed(app, pilot)
        assert app.moment == START + LIVE_UNTIL - STEP
        await pilot.press("full_stop")
        await replayed(app, pilot)
        assert app.moment is None and "AT " not in header(app)


async def test_nothing_then_is_one_line_and_the_screen_stays(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    messages = said(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        await pilot.press("comma")
        await replayed(app, pilot)
        shown_before = app.cluster.analysis
        await pilot.press("left_curly_bracket")  # ten minutes back: before the demo began
        await replayed(app, pilot)
        assert app.moment == START + LIVE_UNTIL - STEP
        assert app.cluster.analysis is shown_before
        assert len(messages) == 1 and "\n" not in messages[0]
        assert messages[0].startswith(f"could not show {shown(START + LIVE_UNTIL - STEP - 600)}")
        assert "loading" not in header(app)


async def test_a_typed_time_goes_there_and_a_bad_one_is_said_in_the_prompt(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        await pilot.press("at", *"soon", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MomentPrompt)
        assert "'soon' is not a time such as" in screen_text(app)
        prompt = app.screen.query_one("#moment-input")
        prompt.value = str(int(START + LIVE_UNTIL + 3600))  # an hour from now
        await pilot.press("enter")
        await pilot.pause()
        assert "is still to come" in screen_text(app)
        prompt.value = shown(START + SEEN_AT)
        await pilot.press("enter")
        await replayed(app, pilot)
        assert not isinstance(app.screen, MomentPrompt)
        assert app.moment == START + SEEN_AT


async def test_a_time_no_backend_holds_is_said_in_the_prompt_and_the_console_goes_on():
    app = make_app(at=170.0, nodes=4)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.poll_once()
        await pilot.press("at", *"-99999999999999999999d", "enter")
        await pilot.pause()
        for typed in ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00", "9" * 400,
                      "-1" + "0" * 30 + "s"):
            assert isinstance(app.screen, MomentPrompt)
            said = screen_text(app)
            assert "outside the times a backend holds" in said or "is not a time such" in said
            app.screen.query_one("#moment-input").value = typed
            await pilot.press("enter")
            await pilot.pause()
        assert "outside the times a backend holds" in screen_text(app)
        await pilot.press("escape")
        await replayed(app, pilot)
        assert app.moment is None and app.is_running


async def test_s_goes_to_the_start_of_the_selected_anomaly(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        while app.cluster.cursor != DYING_RANK:
            await pilot.press("n")
        incident = next(i for i in app.cluster.incidents if i.rank == DYING_RANK)
        since = incident.root.since
        await pilot.press("s")
        await replayed(app, pilot)
        assert since <= app.moment < since + STEP
        assert "XID 79" in row_of(app, DYING_RANK)


async def test_the_selected_row_stays_selected_at_the_start_of_its_anomaly(tmp_path):
    app = make_app(at=176.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        for at in (176.0, 186.0, 196.0, 206.0, 216.0):  # polls 10 s apart
            await polled(app, pilot, at, at)
        await pilot.press("n")
        live_root = app.cluster.incidents[app.cluster.current_incident].root
        assert live_root.rank == DYING_RANK and live_root.kind == "xid"  # caught up on
        await pilot.press("s")
        await replayed(app, pilot)
        shown_then = app.cluster.incidents[app.cluster.current_incident]
        assert shown_then.rank == DYING_RANK and shown_then.root.kind == "xid"
        assert "▶" in next(line for line in screen_text(app).splitlines() if "XID 79" in line)


async def test_the_rank_screen_says_the_moment_and_its_trends_end_there(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        await pilot.press(*["comma"] * 5)
        await replayed(app, pilot)
        app.open_rank(DYING_RANK)
        await replayed(app, pilot)
        screen = app.screen
        assert isinstance(screen, RankScreen)
        assert f"AT {shown_zoned(START + SEEN_AT)}" in screen_text(app)
        assert "the tail as it is now, the moment shown marked in it" in screen_text(app)
        assert screen.analysis.frame.time == START + SEEN_AT
        points = screen.analysis.history.series("sm_active", DYING_RANK)
        assert points and max(p.time for p in points) <= START + SEEN_AT
        log = screen.query_one(LogView)
        for _ in range(500):  # the log's files are read in a thread of the screen's
            if log.lines:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        # The lines written by the moment above the mark, those after it below, in view.
        texts = [text for _, text in log.lines]
        mark = next(i for i, (kind, _) in enumerate(log.lines) if kind == "moment")
        assert mark == first_after(log.unmarked, START + SEEN_AT) and 0 < mark < len(texts)
        assert texts[mark] in screen_text(app) and not log.following
        assert f"{shown(START + SEEN_AT)}: the moment shown" in texts[mark]
        await pilot.press("L")
        await pilot.pause()
        assert "AT " not in screen_text(app) and "moment shown" not in screen_text(app)
        assert screen.analysis.frame.time == START + LIVE_UNTIL
        assert log.following and all(kind != "moment" for kind, _ in log.lines)


async def test_the_console_opens_at_the_moment_it_was_given(tmp_path):
    app = make_app(at=LIVE_UNTIL, log_root=tmp_path)
    app.opens_at = START + SEEN_AT + 1.0  # brought down to the refresh grid
    async with app.run_test(size=(160, 45)) as pilot:
        await replayed(app, pilot)
        await app.poll_once()
        await pilot.pause()
        assert app.moment == START + SEEN_AT
        assert f"AT {shown_zoned(START + SEEN_AT)} · 10 s ago" in header(app)
        assert "XID 79" in row_of(app, DYING_RANK)


def demo_at_190(settings: Settings) -> DemoSource:
    """The engine process's source: the demo 190 s into its scenario, its clock still."""
    return demo_source(DemoSettings(64, 8, seed=7), lambda: START + LIVE_UNTIL, started=START)


async def test_an_engine_in_its_own_process_replays_the_moment_and_the_ranks_history():
    engine = ProcessEngine(load_settings(environ={}), demo_at_190)
    app = RanktopApp(load_settings(), engine=engine, poll=False, clock=lambda: START + 190)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            await app.poll_once()
            await pilot.pause()
            await pilot.press(*["comma"] * 5)
            await replayed(app, pilot)
            assert app.moment == START + SEEN_AT
            assert "XID 79" in row_of(app, DYING_RANK)
            app.open_rank(DYING_RANK)
            await replayed(app, pilot)
            points = app.screen.analysis.history.series("sm_active", DYING_RANK)
            assert points and max(p.time for p in points) <= START + SEEN_AT
    finally:
        engine.close()


async def test_s_on_the_rank_screen_goes_to_the_start_of_its_incident(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        app.open_rank(DYING_RANK)
        await pilot.pause()
        await pilot.press("slash", "comma", "less_than_sign")  # typed into the log search
        assert app.screen.query_one("#log-search").value == ",<"
        assert app.wanted is None and app.moment is None
        await pilot.press("escape", "s")
        await replayed(app, pilot)
        since = next(i for i in app.cluster.incidents if i.rank == DYING_RANK).root.since
        assert since <= app.moment < since + STEP
        assert f"AT {shown_zoned(app.moment)}" in screen_text(app)


async def test_a_pause_stays_what_it_is_at_a_moment_and_back(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL - STEP)
        await pilot.press("p")
        await polled(app, pilot, LIVE_UNTIL, LIVE_UNTIL)  # held while paused
        assert app.cluster.analysis.frame.time == START + LIVE_UNTIL - STEP
        await pilot.press("comma", "comma")
        await replayed(app, pilot)
        assert app.cluster.analysis.frame.time == START + LIVE_UNTIL - 2 * STEP
        assert "AT " in header(app) and "PAUSED" in header(app)
        await pilot.press("L")
        await replayed(app, pilot)
        assert app.cluster.paused and "PAUSED" in header(app) and "AT " not in header(app)
        assert app.cluster.analysis.frame.time == START + LIVE_UNTIL  # the newest poll


async def test_a_time_typed_in_the_command_palette_is_offered_and_shown(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        await pilot.press("ctrl+p", *"-10s")
        await pilot.pause(0.5)  # the palette searches as it is typed (as in test_app.py)
        assert f"time: show the job at {shown(START + SEEN_AT)}" in screen_text(app)
        await pilot.press("enter")
        await replayed(app, pilot)
        assert app.moment == START + SEEN_AT
        await pilot.press("ctrl+p", *"back to live")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await replayed(app, pilot)
        assert app.moment is None


async def test_s_in_the_rank_screens_alerts_goes_to_when_the_highlighted_one_began(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path, event_log=EventLog(tmp_path / "events.jsonl"))
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        app.open_rank(DYING_RANK)
        await replayed(app, pilot, ("rank-alerts",))
        alerts = app.screen.query_one("#rank-alerts")
        newest = [str(cell) for cell in alerts.get_row_at(0)]
        assert newest[:2] == [clock_time(START + 172.0), "missing"]
        incident = next(i for i in app.cluster.incidents if i.rank == DYING_RANK)
        assert incident.root.since < START + 172.0  # s elsewhere on the screen goes there
        await pilot.press("tab", "s")  # from the log to the alerts
        assert alerts.has_focus
        await replayed(app, pilot)
        assert app.moment == START + 172.0


def ended_app(now: float, end: float) -> tuple[RanktopApp, EndedJob]:
    """The demo (4 nodes) on a fake clock at ``now``, its series ending at ``end``."""
    clock = FakeClock(now)
    source = EndedJob(demo_source(DemoSettings(4, 8, seed=7), clock, started=START), end)
    return RanktopApp(load_settings(), source, clock=clock, poll=False), source


async def test_a_console_started_after_the_job_ended_shows_its_last_moment_and_says_so():
    end = START + 181.0
    app, source = ended_app(end + 300, end)
    async with app.run_test(size=(200, 45)) as pilot:
        await app.poll_once()
        await pilot.pause()
        await replayed(app, pilot)
        assert app.moment == START + 180  # the last refresh before the end
        top = header(app)
        assert f"the job's series ended at {shown(end)}, 5 min ago" in top
        assert "AT " in top and "@ earlier" in top
        assert "source down" not in screen_text(app)
        assert app.cluster.analysis.ranks_up > 0  # the last moment's ranks, not "0/0 up"
        app.clock.now += STEP
        await app.poll_once()  # the polls go on: still gone, the moment stays
        await pilot.pause()
        assert app.moment == START + 180
        source.back = True  # a new attempt: the job answers again
        app.clock.now += STEP
        await app.poll_once()
        await pilot.pause()
        await replayed(app, pilot)
        assert app.moment is None and "series ended" not in header(app)


async def test_a_scrub_says_loading_at_once_and_every_replay_that_failed(tmp_path):
    """The engine takes its time over each moment, and fails the first: the header says which
    moment is loading as soon as it is asked for, and the failure is said though another
    moment was asked for meanwhile."""
    app = make_app(at=170.0, nodes=8, log_root=tmp_path)
    messages = said(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, LIVE_UNTIL - STEP, LIVE_UNTIL)
        replay, answered = app.engine.at, asyncio.Event()
        failed = START + LIVE_UNTIL - STEP

        async def slow(moment: float, maps=None):
            await answered.wait()
            if moment == failed:
                raise NothingThen("the backend timed out")
            return await replay(moment, maps)

        app.engine.at = slow
        await pilot.press("comma")
        await pilot.pause()
        assert f"loading {shown(failed)}…" in header(app)
        await pilot.press("comma")  # asked for while the first still loads
        await pilot.pause()
        assert f"loading {shown(failed - STEP)}…" in header(app)
        answered.set()
        await replayed(app, pilot)
        assert app.moment == failed - STEP
        assert messages == [f"could not show {shown(failed)}: the backend timed out"]


async def test_the_event_keys_step_from_one_event_to_the_next(tmp_path):
    app = make_app(at=170.0, log_root=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 150.0, LIVE_UNTIL)
        events = sorted({a.since for a in app.analysis.anomalies})
        xid = next(a.since for a in app.analysis.anomalies if a.kind == "xid")
        death = next(a.since for a in app.analysis.anomalies if a.kind == "missing")
        assert xid < death
        await pilot.press("left_parenthesis")  # from live: the newest event
        await replayed(app, pilot)
        assert app.moment == max(t for t in events if t < app.live_time())
        visited = [app.moment]
        while app.moment is not None and app.moment > xid:
            await pilot.press("left_parenthesis")
            await replayed(app, pilot)
            visited.append(app.moment)
        assert app.moment == xid and death in visited  # each event, not each refresh
        assert "XID 79" in row_of(app, DYING_RANK)
        await pilot.press("right_parenthesis")
        await replayed(app, pilot)
        assert app.moment == death and "missing" in row_of(app, DYING_RANK)
        for _ in range(len(events) + 1):  # past the last event: live again
            await pilot.press("right_parenthesis")
            await replayed(app, pilot)
        assert app.moment is None


async def test_the_rank_screen_asks_for_the_alerts_of_the_moment_shown(tmp_path):
    """At a past moment the alerts are those of the hour before it (none that began after);
    back to live, those of now."""
    app = make_app(at=170.0, log_root=tmp_path)
    asked: list[float | None] = []
    alert_rows = app.engine.alert_rows

    def recording(rank, until=None):
        asked.append(until)
        return alert_rows(rank, until)

    app.engine.alert_rows = recording
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 170.0, LIVE_UNTIL)
        app.open_rank(DYING_RANK)
        await pilot.pause()
        await pilot.press("comma")
        await replayed(app, pilot)
        await pilot.press("L")
        await replayed(app, pilot)
        for _ in range(100):  # each in a worker of its own
            if len(asked) == 3:
                break
            await pilot.pause(0.05)
        assert asked == [None, app.cluster.analysis.frame.time - STEP, None]

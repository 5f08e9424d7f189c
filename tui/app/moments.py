"""The console's "at" mode: the screens show a past moment of the job, replayed by the
engine (``EngineClient.at``), instead of its newest poll.

Live polls go on behind, as while paused, and are shown again on the way back to live (the
live key, or a step forward past the newest poll). Moments fall on the refresh grid; a
step is taken from the moment asked for last, so keys pressed while a replay runs add up,
and only the last moment asked for is shown. The header says which moment is loading as
soon as it is asked for. One replay runs at a time and none is cancelled (an engine in
another process answers every call it was sent): keys pressed meanwhile are replayed when
it ends, as one. A moment that cannot be had is one line of notification, said even when
another moment was asked for meanwhile, and the screen stays where it was.

When the live poll finds the job's series ended (``Snapshot.ended``: no rank answers), the
console goes by itself to their last moment, once, as if asked for it; the polls go on, and
when the job answers again (a new attempt) the console is live again, unless the user has
gone to another moment meanwhile."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from textual import work
from textual.binding import Binding

from ..core.analysis import Analysis
from ..core.event_times import event_times, next_event
from ..core.moment import JobEnd, aligned, shown
from ..engine.snapshot import Snapshot
from ..screens.moment_prompt import MomentPrompt
from ..screens.rank import RankScreen

if TYPE_CHECKING:
    from .console import RanktopApp

MINUTE = 60.0
MOMENT_BINDINGS = [  # the live key first: at a moment, the footer shows it before the rest
    Binding("L", "live", "Live", id="moment.live",
            tooltip="Back to the live job from a past moment"),
    Binding("comma", "scrub(-1)", "Earlier", key_display=",", id="moment.earlier",
            tooltip="Show the job one refresh earlier (from now: the last poll but one)"),
    Binding("full_stop", "scrub(1)", "Later", key_display=".", show=False,
            id="moment.later", tooltip="Show the job one refresh later; past now: live"),
    Binding("less_than_sign", f"scrub_seconds({-MINUTE})", "Minute earlier",
            key_display="<", show=False, id="moment.earlier_minute",
            tooltip="Show the job one minute earlier"),
    Binding("greater_than_sign", f"scrub_seconds({MINUTE})", "Minute later",
            key_display=">", show=False, id="moment.later_minute",
            tooltip="Show the job one minute later; past now: live"),
    Binding("left_curly_bracket", f"scrub_seconds({-10 * MINUTE})", "10 min earlier",
            key_display="{", show=False, id="moment.earlier_ten",
            tooltip="Show the job ten minutes earlier"),
    Binding("right_curly_bracket", f"scrub_seconds({10 * MINUTE})", "10 min later",
            key_display="}", show=False, id="moment.later_ten",
            tooltip="Show the job ten minutes later; past now: live"),
    Binding("left_parenthesis", "event(-1)", "Previous event", key_display="(", show=False,
            id="moment.previous_event",
            tooltip="Show the job when the event before this moment happened (an anomaly "
                    "began, a rank died, the job restarted)"),
    Binding("right_parenthesis", "event(1)", "Next event", key_display=")", show=False,
            id="moment.next_event",
            tooltip="Show the job when the next event after this moment happened; past the "
                    "last: live"),
    Binding("at", "ask_moment", "At time", key_display="@", show=False, id="moment.at",
            tooltip="Show the job as it was at a time you type (03:12:40, -15m, an ISO "
                    "time)"),
]


class MomentMode:
    """Mixed into the app: the moment shown and the way there and back."""

    moment: float | None = None
    """The past moment the screens show (epoch seconds); None: the live job."""
    home: float | None = None
    """What stands for live: None, or the moment of the bundle reopened."""
    wanted: float | None = None
    """The moment asked for, not shown yet (being replayed)."""
    replay_running: bool = False
    """A replay is under way (its worker takes each moment wanted until none is)."""
    ended: JobEnd | None = None
    """The job's series ended, as the newest live poll found; None: the job answers."""
    end_shown: float | None = None
    """The moment gone to by itself when the job's series ended (None: none)."""

    @property
    def moment_analysis(self: RanktopApp) -> Analysis | None:
        """The analysis of ``moment`` (None: the live job is shown)."""
        return None if self.moment is None else self.cluster.analysis

    def follow_job_end(self: RanktopApp, ended: JobEnd | None) -> None:
        """Go to the last moment of the job's series when a live poll first finds them ended,
        if the live job is on screen; back to live when the job answers again, if that
        moment is still the one shown."""
        was, self.ended = self.ended, ended
        live = self.moment is None and self.wanted is None and self.home is None
        if ended is not None and was is None and live:
            self.end_shown = aligned(ended.at, self.settings.refresh_seconds)
            self.go_to_moment(ended.at)
        elif ended is None and was is not None:
            if self.end_shown is not None and self.end_shown in (self.moment, self.wanted):
                self.action_live()
            self.end_shown = None

    def action_scrub(self: RanktopApp, refreshes: int) -> None:
        self.action_scrub_seconds(refreshes * self.settings.refresh_seconds)

    def action_scrub_seconds(self: RanktopApp, seconds: float) -> None:
        start = self.wanted if self.wanted is not None else self.moment
        self.go_to_moment((self.live_time() if start is None else start) + seconds)

    def action_event(self: RanktopApp, direction: int) -> None:
        """To the moment of the next (1) or previous (-1) event the console knows of: those
        of the live job and of the moment shown."""
        analyses = [a for a in (self.analysis, self.moment_analysis) if a is not None]
        times = event_times([x for a in analyses for x in a.anomalies],
                            [r for a in analyses for r in a.restarts])
        start = self.wanted if self.wanted is not None else self.moment
        found = next_event(times, self.live_time() if start is None else start,
                           self.settings.refresh_seconds, direction)
        if found is not None:
            self.go_to_moment(found)
        elif direction > 0 and start is not None:
            self.action_live()
        else:
            self.notify(f"No event {'after' if direction > 0 else 'before'} this moment.",
                        title="past moment", timeout=3)

    def live_time(self: RanktopApp) -> float:
        """The time of the newest live poll (now, before the first)."""
        frame = self.analysis.frame
        return frame.time if frame is not None else self.clock()

    def go_to_start(self: RanktopApp, since: float) -> None:
        """The first moment of the grid at which something that began at ``since`` shows."""
        step = self.settings.refresh_seconds
        self.go_to_moment(math.ceil(since / step) * step)

    def go_to_moment(self: RanktopApp, moment: float) -> None:
        """Replay ``moment`` and show it; at or past the newest poll, the live job."""
        if moment >= self.live_time():
            self.action_live()
            return
        self.wanted = aligned(moment, self.settings.refresh_seconds)
        self.show_moment_badges()
        if not self.replay_running:
            self.replay_running = True
            self.replay_moments()

    def action_ask_moment(self: RanktopApp) -> None:
        self.push_screen(MomentPrompt(self.clock), self._moment_typed)

    def _moment_typed(self: RanktopApp, moment: float | None) -> None:
        if moment is not None:
            self.go_to_moment(moment)

    @work(group="moment", exit_on_error=False, description="replay past moments")
    async def replay_moments(self: RanktopApp) -> None:
        try:
            while self.wanted is not None:
                moment = self.wanted
                try:
                    snapshot = await self.engine.at(moment, self.cluster.map_geometry())
                except Exception as error:  # NothingThen says why; anything else is said too
                    self._moment_failed(moment, error)
                    continue
                if moment == self.wanted:  # else the user has asked for another meanwhile
                    self.wanted = None
                    await self._show_moment(snapshot)
        finally:
            self.replay_running = False

    def _moment_failed(self: RanktopApp, moment: float, error: Exception) -> None:
        if moment == self.wanted:
            self.wanted = None
            self.show_moment_badges()
        said = " ".join(str(error).split()) or type(error).__name__
        self.notify(f"could not show {shown(moment)}: {said}", title="past moment",
                    severity="warning", timeout=8, markup=False)

    async def _show_moment(self: RanktopApp, snapshot: Snapshot) -> None:
        self.moment = snapshot.at
        await self.show(snapshot, asked=True)
        self.refresh_bindings()

    def action_live(self: RanktopApp) -> None:
        if self.moment != self.home or self.wanted is not None:
            self.back_to_live()

    @work(exclusive=True, group="live", exit_on_error=False, description="back to live")
    async def back_to_live(self: RanktopApp) -> None:
        """The newest live poll on every screen (a replay under way is let finish, unseen)."""
        was_at = self.moment
        self.moment, self.wanted = self.home, None
        if was_at == self.home:  # only a replay was under way: "live" is still shown
            self.show_moment_badges()
        else:
            await self.show(self.live, asked=True)
        self.refresh_bindings()

    def show_moment_badges(self: RanktopApp) -> None:
        """Tell the screens which moment is shown and which is being replayed."""
        self.cluster.show_replaying(self.wanted)
        if isinstance(self.screen, RankScreen):
            self.screen.show_replaying(self.wanted)

    def check_action(self: RanktopApp, action: str, parameters: tuple[object, ...],
                     ) -> bool | None:
        if action == "live":  # in the footer only while a past moment is shown
            return self.moment != self.home or self.wanted is not None
        return super().check_action(action, parameters)  # type: ignore[misc]

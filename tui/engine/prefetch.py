"""The moments next to the one shown, prepared while the user reads it: a step back or on
then comes from the replay's kept analyses at once.

After each moment shown (``around``) a thread of its own prepares, in order, the refresh
after it, the refresh before it and, where a minute's frames are cheap to read and analyse
(``CHEAP_VALUES``), the minute after and the minute before; no more of them than the
replay keeps analyses of, less the one shown (``Replay.analyses_kept``). It gives way: a
new moment shown replaces what is left to prepare, a live poll (``polling``) is waited for
between two frames, and a moment asked meanwhile stops the one being prepared
(``Replay.prepare``)."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator

from ..core.moment import aligned
from .replay import Replay

MINUTE_SECONDS = 60.0  # the `<` and `>` keys' step
CHEAP_VALUES = 2_000_000  # a minute's frames this many values in all are prepared too


def neighbours(replay: Replay, moment: float) -> list[float]:
    """The moments a user looking at ``moment`` likely asks next, the likeliest first."""
    step = replay.step
    moment = aligned(moment, step)
    near = [moment + step, moment - step]
    minute_values = MINUTE_SECONDS / step * replay.frames.values_per_frame
    if 0 < minute_values <= CHEAP_VALUES:
        near += [moment + MINUTE_SECONDS, moment - MINUTE_SECONDS]
    return near[:max(0, replay.analyses_kept - 1)]


class Prefetch:
    """Prepares ``replay``'s moments around the one shown, in a thread of its own."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self._changed = threading.Condition()
        self._planned: list[float] = []
        self._plan = 0  # bumped by each ``around``: the one under way stops
        self._polls = 0  # live polls under way
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def around(self, moment: float) -> None:
        """Prepare the moments next to ``moment`` (just shown), in place of what was left."""
        planned = neighbours(self.replay, moment)
        with self._changed:
            if self._closed:
                return
            self._planned, self._plan = planned, self._plan + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="prefetch",
                                                daemon=True)
                self._thread.start()
            self._changed.notify_all()

    @contextlib.contextmanager
    def polling(self) -> Iterator[None]:
        """A live poll under way: nothing is fetched or analysed for a prefetch meanwhile
        (past the frame in hand)."""
        with self._changed:
            self._polls += 1
        try:
            yield
        finally:
            with self._changed:
                self._polls -= 1
                self._changed.notify_all()

    def settled(self, timeout: float | None = None) -> bool:
        """Wait until nothing is left to prepare; whether it came to that."""
        with self._changed:
            return self._changed.wait_for(
                lambda: self._closed or not (self._planned or self._busy), timeout)

    def close(self) -> None:
        """Nothing more is prepared: the thread ends past the frame in hand."""
        with self._changed:
            self._closed, self._planned = True, []
            self._changed.notify_all()

    def _serve(self) -> None:
        while True:
            with self._changed:
                self._busy = False
                self._changed.notify_all()
                self._changed.wait_for(lambda: self._closed or self._planned)
                if self._closed:
                    return
                moment, plan = self._planned.pop(0), self._plan
                self._busy = True
            try:
                self.replay.prepare(moment, functools.partial(self._go_on, plan))
            except Exception:  # the backend's trouble is the asked moment's to tell
                with self._changed:
                    self._planned = []

    def _go_on(self, plan: int) -> bool:
        """Whether preparing for ``plan`` goes on, once no live poll is under way."""
        with self._changed:
            self._changed.wait_for(lambda: self._closed or self._plan != plan
                                   or not self._polls)
            return not self._closed and self._plan == plan

"""A rank whose series vanished is "not reporting" since when it went, and what the live
scrape says of its process: frozen (the scrape times out) or gone (refused)."""

from __future__ import annotations

import calendar

from ranktop.tui.core.detect.down import SCRAPE_REFUSED, SCRAPE_TIMING_OUT, Liveness
from ranktop.tui.core.model import Frame

T0 = calendar.timegm((2026, 11, 28, 15, 9, 58))


def frame(t: float, down: tuple[int, ...] = (), scrape: dict | None = None) -> Frame:
    values = {"step_time": [float("nan") if r in down else 0.5 for r in range(4)]}
    return Frame(time=t, values=values, scrape=scrape or {})


def missing(liveness: Liveness, moment: Frame) -> dict[int, str]:
    up = moment.ranks_up(4)
    return {a.rank: a.summary for a in liveness.update(moment, up) if a.kind == "missing"}


def test_a_vanished_rank_is_not_reporting_since_it_went_not_dead() -> None:
    liveness = Liveness()
    missing(liveness, frame(T0))
    said = missing(liveness, frame(T0 + 2, down=(2,)))
    assert said == {2: "not reporting since 15:10:00 (its series vanished)"}


def test_the_live_scrape_says_frozen_or_gone_and_the_time_it_went_stays() -> None:
    liveness = Liveness()
    missing(liveness, frame(T0))
    missing(liveness, frame(T0 + 2, down=(2, 3)))
    said = missing(liveness, frame(T0 + 4, down=(2, 3),
                                   scrape={2: SCRAPE_TIMING_OUT, 3: SCRAPE_REFUSED}))
    assert said == {
        2: "not reporting since 15:10:00 (scrape timing out: alive but frozen?; its series"
           " vanished)",
        3: "gone since 15:10:00 (connection refused; its series vanished)"}
    # the frozen process was killed since: the scrape is refused now
    later = missing(liveness, frame(T0 + 6, down=(2, 3), scrape={2: SCRAPE_REFUSED}))
    assert later[2].startswith("gone since 15:10:00") and later[3] == said[3]

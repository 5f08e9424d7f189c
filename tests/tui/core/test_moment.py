"""Typed times: every form ``--at`` accepts, in a given zone, and the ones it refuses."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.moment import (
    EARLIEST,
    FUTURE_SLACK_SECONDS,
    MomentError,
    ago,
    aligned,
    parse_moment,
    shown,
    shown_full,
    use_utc,
    zone_name,
)

from tests.tui.properties import FEW

UTC = timezone.utc
PARIS = timezone(timedelta(hours=1))
NOW = datetime(2026, 11, 24, 3, 20, 0, tzinfo=UTC).timestamp()


def at(text: str, zone=UTC) -> str:
    return shown_full(parse_moment(text, NOW, zone), UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-24T03:12:40Z", "2026-11-24T03:12:40+00:00"),
    ("2026-11-24T03:12:40z", "2026-11-24T03:12:40+00:00"),
    ("2026-11-24 04:12:40+01:00", "2026-11-24T03:12:40+00:00"),
    ("2026-11-24T03:12", "2026-11-24T03:12:00+00:00"),
    ("03:12", "2026-11-24T03:12:00+00:00"),
    ("03:12:40", "2026-11-24T03:12:40+00:00"),
    ("-15m", "2026-11-24T03:05:00+00:00"),
    ("-90s", "2026-11-24T03:18:30+00:00"),
    ("-1h30m", "2026-11-24T01:50:00+00:00"),
    ("-1d", "2026-11-23T03:20:00+00:00"),
    ("1795000000", "2026-11-18T11:06:40+00:00"),
    ("  -2h  ", "2026-11-24T01:20:00+00:00"),
])
def test_every_form_names_its_moment(text, expected):
    assert at(text) == expected


def test_a_time_without_a_zone_is_read_in_the_users_zone():
    assert at("04:12", PARIS) == "2026-11-24T03:12:00+00:00"
    assert at("2026-11-24T04:12:40", PARIS) == "2026-11-24T03:12:40+00:00"
    assert at("2026-11-24T02:12:40Z", PARIS) == "2026-11-24T02:12:40+00:00"


def test_a_clock_time_still_to_come_today_is_yesterdays():
    assert at("23:50") == "2026-11-23T23:50:00+00:00"


@pytest.mark.parametrize("text", ["", "bogus", "25:00", "03:61", "-15", "15m", "-m",
                                  "2026-13-01T00:00", "12345"])
def test_what_names_no_moment_is_refused_with_what_would(text):
    with pytest.raises(MomentError, match="is not a time such as"):
        parse_moment(text, NOW, UTC)


def test_a_moment_still_to_come_is_refused():
    with pytest.raises(MomentError, match="still to come"):
        parse_moment("2026-11-24T04:00:00Z", NOW, UTC)


# Times the campaign typed that crashed the console: each is one line, never a crash.
OUTSIDE = {
    "days-past-a-float": "-99999999999999999999d", "400-digits": "9" * 400,
    "400-digit-days": "-" + "9" * 400 + "d", "year-1-utc": "0001-01-01T00:00:00Z",
    "year-1-local": "0001-01-01T00:00:00", "before-1970": "1969-12-31T23:59:59Z",
    "year-9999": "9999-12-31T23:59:59-23:59", "30000-parts": "-" + "1d" * 30_000,
}


@pytest.mark.parametrize("text", OUTSIDE.values(), ids=OUTSIDE.keys())
def test_a_time_no_backend_holds_is_one_line(text):
    with pytest.raises(MomentError) as refused:
        parse_moment(text, NOW, UTC)
    said = str(refused.value)
    assert "\n" not in said and len(said) < 200
    assert "outside the times a backend holds" in said or "is not a time such as" in said


# Pieces of the forms the parser reads, so that examples come near what it matches.
TIME_PIECES = st.one_of(
    st.sampled_from(["-", "T", "Z", "z", ":", "+", "-0", "s", "m", "h", "d", ".", " ", "1970",
                     "0001-01-01", "9999-12-31", "2026-11-24", "03:12:40", "+23:59", "\x00"]),
    st.text("0123456789", min_size=1, max_size=420), st.text(max_size=6))
TIMES = st.one_of(st.lists(TIME_PIECES, max_size=8).map("".join), st.text(max_size=40))


@FEW
@given(TIMES)
def test_any_text_is_a_moment_a_backend_holds_or_one_line(text):
    try:
        moment = parse_moment(text, NOW, UTC)
    except MomentError as refused:
        assert "\n" not in str(refused) and len(str(refused)) < 300
        return
    assert EARLIEST <= moment <= NOW + FUTURE_SLACK_SECONDS
    assert shown_full(moment) and shown(moment)  # every screen can say it


def test_moments_are_said_and_brought_to_the_grid():
    assert shown(NOW, UTC) == "03:20:00"
    assert [ago(s) for s in (0, 40, 840, 3 * 3600 + 300, 2 * 86400 + 4 * 3600)] == [
        "0 s", "40 s", "14 min", "3 h 5 min", "2 d 4 h"]
    assert aligned(101.3, 2.0) == 100.0 and aligned(100.0, 2.0) == 100.0


@pytest.fixture
def berlin(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
    use_utc(False)


ELEVEN_UTC = 1_795_000_000.0 - 1_795_000_000.0 % 86_400 + 11 * 3600 + 6 * 60 + 40


def test_every_time_for_people_is_in_the_local_zone_by_default(berlin):
    # the incident detail, the evidence, the report and the moment badge all say it so
    assert shown(ELEVEN_UTC) == "12:06:40"
    assert shown(ELEVEN_UTC, dated=True).endswith("12:06:40 CET")
    assert zone_name(ELEVEN_UTC) == "CET"


def test_utc_when_asked(berlin):
    use_utc(True)
    assert shown(ELEVEN_UTC) == "11:06:40"
    assert shown(ELEVEN_UTC, dated=True).endswith("11:06:40 UTC")
    assert shown_full(ELEVEN_UTC).endswith("T11:06:40+00:00")


def test_a_time_of_another_day_says_its_date(berlin):
    assert shown(ELEVEN_UTC, now=ELEVEN_UTC + 3600) == "12:06:40"
    day_before = time.strftime("%b %d", time.localtime(ELEVEN_UTC))
    assert shown(ELEVEN_UTC, now=ELEVEN_UTC + 86_400) == f"{day_before} 12:06:40"


def test_the_utc_flag_and_setting_reach_the_settings():
    from ranktop.tui.cli import flags
    from ranktop.tui.settings.config import load_settings

    args = flags.report_parser().parse_args(["--demo", "--utc"])
    overrides, names = flags.overrides(args)
    assert load_settings(None, overrides, environ={}, flag_names=names).utc is True
    assert load_settings(environ={"RANKTOP_UTC": "1"}).utc is True
    assert load_settings(environ={}).utc is False

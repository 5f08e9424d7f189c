"""The real console (Pilot, real polling) and `ranktop report` against the fault proxy: keys
answered while a poll hangs, the header naming the fault within two polls, recovery without
a restart, and a struggling server never hammered."""

from __future__ import annotations

import json
import statistics
import time

import pytest
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.cli.main import main
from ranktop.tui.sources.prometheus import batch as prom_batch
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.faults.conftest import JOB, RANKS, settings_for
from tests.tui.conftest import screen_text

REFRESH = 0.5


async def wait_for(app, pilot, text: str, seconds: float) -> float:
    """Seconds until the screen shows ``text`` (AssertionError past ``seconds``)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if text in screen_text(app):
            return time.monotonic() - started
        await pilot.pause(0.1)
    raise AssertionError(f"{text!r} not shown in {seconds} s:\n{screen_text(app)}")


async def key_seconds(app, pilot, presses: int = 6) -> float:
    """The median time for a cursor key to be answered on screen."""
    times = []
    for index in range(presses):
        key = "l" if index % 2 == 0 else "h"
        before = app.screen.cursor
        started = time.perf_counter()
        await pilot.press(key)
        await pilot.pause()
        times.append(time.perf_counter() - started)
        assert app.screen.cursor != before
    return statistics.median(times)


async def test_keys_are_answered_while_a_poll_hangs_and_the_header_says_late(proxy):
    refresh = 1.0  # longer than a healthy poll through the proxy takes
    settings = settings_for(proxy.url, timeout=20, refresh=refresh)
    app = RanktopApp(settings, PrometheusSource(settings))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(app, pilot, f"ranks {RANKS}/{RANKS} up", 20)
        healthy = await key_seconds(app, pilot)
        proxy.set("hang")
        late = await wait_for(app, pilot, "LATE: no answer for", 2 * refresh + 1.5)
        hanging = await key_seconds(app, pilot)
        print(f"\nkey: healthy {healthy * 1000:.1f} ms, poll hanging {hanging * 1000:.1f} ms "
              f"(ratio {hanging / healthy:.2f}); LATE shown after {late:.1f} s")
        assert hanging / healthy < 5  # a relative bound: the key does not wait for the poll
        proxy.set("pass")
        await wait_for(app, pilot, "● ok", 10)


async def test_a_503_is_named_as_stale_within_two_polls_and_recovers(proxy):
    proxy.retry_after = "1"
    settings = settings_for(proxy.url, timeout=2, refresh=REFRESH)
    app = RanktopApp(settings, PrometheusSource(settings))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(app, pilot, f"ranks {RANKS}/{RANKS} up", 20)
        proxy.set("http-503")
        # A poll under way when the fault starts is partial (SLOW); the next is STALE. The
        # 1 s Retry-After is honoured between them.
        shown = await wait_for(app, pilot, "● STALE", 2 * REFRESH + 1 + 2)
        assert "HTTP 503: upstream says 503" in screen_text(app)
        proxy.set("pass")
        recovered = await wait_for(app, pilot, "● ok", 10)
        print(f"\n503: stale shown after {shown:.1f} s, ok {recovered:.1f} s after it cleared")


def test_report_honours_retry_after_and_exits_1_when_it_cannot_judge(proxy, capsys):
    proxy.retry_after = "2"
    proxy.set("http-429")
    before = proxy.requests
    code = main(["report", "--prometheus", proxy.url, "--job", JOB, "--duration", "3.5",
                 "--refresh", "0.2"])
    asked = proxy.requests - before
    assert code == 1
    # a poll every 2 s, not every 0.2 s; each sends what is on its way when the 429 comes
    assert 1 <= asked <= 3 * prom_batch.CONCURRENT, asked
    assert "HTTP 429" in capsys.readouterr().out


def test_report_with_no_rank_up_exits_1(proxy, capsys):
    proxy.set("nan")
    assert main(["report", "--prometheus", proxy.url, "--job", JOB]) == 1
    assert f"cannot judge: no rank of {RANKS} is up" in capsys.readouterr().out


def test_values_past_a_32_bit_float_are_reported_and_bundled_as_valid_json(proxy, capsys,
                                                                           tmp_path):
    proxy.set("below-float32")  # every sample -1e308: -inf as a 32-bit float
    code = main(["report", "--prometheus", proxy.url, "--job", JOB, "--json",
                 "--bundle", str(tmp_path)])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    documents = [captured.out, *(p.read_text() for p in tmp_path.rglob("*.json"))]
    assert len(documents) > 2  # the report's, and the bundle's analysis, queries, settings
    for text in documents:
        json.loads(text, parse_constant=lambda constant: pytest.fail(f"{constant} in JSON"))

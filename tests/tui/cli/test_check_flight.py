"""`check-config` says how many Flight Recorder dumps the pattern finds, where it looked,
and how old they are."""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

from ranktop.tui.cli.check_flight import check_flight
from ranktop.tui.cli.main import main

FROZEN = Path(__file__).parents[1] / "flight" / "real_2_14" / "frozen"
NOW = 1_800_000_000.0


def dumps_at(folder: Path, ages: dict[int, float], now: float = NOW) -> None:
    for rank, age in ages.items():
        path = folder / f"fr_{rank}"
        shutil.copy(FROZEN / "fr_0", path)
        os.utime(path, (now - age, now - age))


def test_it_counts_the_dumps_and_says_how_old_they_are(tmp_path: Path) -> None:
    dumps_at(tmp_path, {0: 40.0, 1: 42.0, 3: 600.0})
    out = io.StringIO()
    check_flight(str(tmp_path / "fr_"), 4, out, now=NOW)
    text = out.getvalue()
    assert f"looked at      {tmp_path / 'fr_'}{{rank}}" in text
    assert "found          3 dumps of 4 ranks (ranks 0, 1, 3)" in text
    assert "written        newest 40 s ago, oldest 10 min ago" in text


def test_none_found_is_said_with_where_it_looked(tmp_path: Path) -> None:
    out = io.StringIO()
    check_flight(str(tmp_path), None, out, now=NOW)
    text = out.getvalue()
    assert str(tmp_path / "comm_lib_trace_rank_{rank}") in text and "no dump found" in text


def test_check_config_without_prometheus_counts_the_configured_dumps(tmp_path, capsys) -> None:
    dumps_at(tmp_path, {0: 300.0, 1: 420.0}, now=time.time())
    code = main(["check-config", "--flight-recorder", str(tmp_path / "fr_{rank}")])
    out = capsys.readouterr().out
    assert code == 1  # no Prometheus to check
    assert "found          2 dumps (ranks 0, 1)" in out
    assert "written        newest 5 min ago, oldest 7 min ago" in out

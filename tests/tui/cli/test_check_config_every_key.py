"""Every key of the shipped default.toml, given a value of the wrong kind, is refused by
``ranktop check-config`` with exit status 2 and one line that names the key."""

from __future__ import annotations

import io
import math
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.cli.main import main
from ranktop.tui.settings.paths import shipped_config_dir
from ranktop.tui.settings.reader import FREE_TABLES
from ranktop.tui.settings.writer import toml_text

from tests.tui.properties import FEW

DEFAULTS = tomllib.loads((shipped_config_dir() / "default.toml").read_text())


def leaves(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for key, value in table.items():
        found.extend(leaves(value, (*prefix, key)) if isinstance(value, dict) else
                     [(*prefix, key)])
    return found


KEYS = leaves(DEFAULTS)


def wrong_type(value: Any) -> Any:
    """A value no key of this kind can take."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "ten"
    if isinstance(value, list):
        return 5
    return 5  # a string's key given a number


def config_with(key: tuple[str, ...], value: Any) -> str:
    *tables, name = key
    return f"[{'.'.join(tables)}]\n{toml_text({'x': {name: value}}).split(chr(10), 1)[1]}"


TAKEN = 1  # the file was read; with no Prometheus named, there is nothing more to check


def checked(tmp_path: Path, capsys, text: str) -> tuple[int, str]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    status = main(["check-config", "--config", str(path)])
    return status, capsys.readouterr().err


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("RANKTOP_PROMETHEUS_URL", "RANKTOP_JOB", "RANKTOP_DCGM_SELECTOR"):
        monkeypatch.delenv(name, raising=False)


def test_every_table_of_the_defaults_is_walked():
    assert len(KEYS) > 60 and ("display", "refresh_seconds") in KEYS
    assert {key[0] for key in KEYS} >= {"display", "demo", "prometheus", "ranks", "detect",
                                        "logs", "metrics"}


def test_the_defaults_themselves_are_accepted(tmp_path, capsys):
    assert checked(tmp_path, capsys, toml_text({})) == (TAKEN, "")


@pytest.mark.parametrize("key", KEYS, ids=".".join)
def test_a_value_of_the_wrong_type_is_one_line_naming_the_key(tmp_path, capsys, key):
    default = DEFAULTS
    for part in key:
        default = default[part]
    status, err = checked(tmp_path, capsys, config_with(key, wrong_type(default)))
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f": {'.'.join(key)}: " in err


NUMERIC = [key for key in KEYS if type(DEFAULTS[key[0]][key[1]] if len(key) == 2 else
                                      DEFAULTS[key[0]][key[1]][key[2]]) in (int, float)]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300, 10**18, -(10**18)],
                         ids=["nan", "inf", "-inf", "1e300", "1e18", "-1e18"])
@pytest.mark.parametrize("key", NUMERIC, ids=".".join)
def test_a_number_out_of_all_proportion_is_one_line_naming_the_key(tmp_path, capsys, key, bad):
    if key == ("demo", "seed") and bad == 10**18:
        return  # any whole number is a seed
    status, err = checked(tmp_path, capsys, config_with(key, bad))
    assert status == 2
    assert err.count("\n") == 1 and f": {'.'.join(key)}: " in err


@pytest.mark.parametrize("bad", [0, -1, -0.5], ids=["zero", "-1", "-0.5"])
@pytest.mark.parametrize("key", NUMERIC, ids=".".join)
def test_zero_or_a_negative_number_is_taken_or_refused_in_one_line(tmp_path, capsys, key, bad):
    status, err = checked(tmp_path, capsys, config_with(key, bad))
    assert (status, err.count("\n")) in ((TAKEN, 0), (2, 1))
    assert status == TAKEN or f": {'.'.join(key)}: " in err


@pytest.mark.parametrize("key", [key for key in KEYS if key[0] not in FREE_TABLES], ids=".".join)
def test_an_unknown_key_beside_each_key_is_named(tmp_path, capsys, key):
    *tables, name = key
    status, err = checked(tmp_path, capsys, f"[{'.'.join(tables)}]\n{name}_typo = 1\n")
    assert status == 2 and err.count("\n") == 1
    assert f": {'.'.join((*tables, name + '_typo'))}: unknown key" in err


VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                   st.lists(st.one_of(st.integers(), st.text(max_size=5)), max_size=3))


@FEW
@given(st.dictionaries(st.sampled_from([key for key in KEYS if key[-1] != "url"]), VALUES,
                       max_size=4))
def test_any_values_are_taken_or_refused_in_one_line(tmp_path_factory, changes):
    tables: dict[str, dict[str, Any]] = {}
    for key, value in changes.items():
        if value is not None:
            tables.setdefault(".".join(key[:-1]), {})[key[-1]] = value
    path = tmp_path_factory.mktemp("config") / "config.toml"
    path.write_text(toml_text(tables), encoding="utf-8")
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = main(["check-config", "--config", str(path)])
    err = err.getvalue()
    assert (status, err.count("\n")) in ((TAKEN, 0), (2, 1)), err


@pytest.mark.parametrize("key", KEYS, ids=".".join)
def test_the_console_report_and_check_config_refuse_with_the_same_line(tmp_path, capsys, key):
    default = DEFAULTS
    for part in key:
        default = default[part]
    path = tmp_path / "config.toml"
    path.write_text(config_with(key, wrong_type(default)), encoding="utf-8")
    lines = []
    for argv in (["--demo"], ["report", "--demo"], ["check-config"]):
        assert main([*argv, "--config", str(path)]) == 2
        lines.append(capsys.readouterr().err)
    assert lines[0] == lines[1] == lines[2] and lines[0].count("\n") == 1


BINDING_IDS = re.findall(r'^# "([a-z_.]+)" = ', (shipped_config_dir() / "default.toml")
                         .read_text(), re.MULTILINE)
KEY_NAMES = st.one_of(st.sampled_from(["q", "N", "ctrl+x", "f5", "space", "escape,q", "",
                                       ",", "ctrl+", "up,,k", "\x1b", "é", "nonsense_key"]),
                      st.text(max_size=8))


@FEW
@given(st.dictionaries(st.one_of(st.sampled_from(BINDING_IDS), st.text(max_size=6)),
                       st.one_of(KEY_NAMES, st.integers(), st.booleans()), max_size=4))
def test_any_key_bindings_are_taken_or_refused_in_one_line(tmp_path_factory, keys):
    path = tmp_path_factory.mktemp("keys") / "config.toml"
    path.write_text(toml_text({"keys": keys}), encoding="utf-8")
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = main(["check-config", "--config", str(path)])
    assert (status, err.getvalue().count("\n")) in ((TAKEN, 0), (2, 1)), err.getvalue()


def test_every_binding_id_of_the_defaults_is_fuzzed():
    assert len(BINDING_IDS) > 30 and "app.quit" in BINDING_IDS

"""Config written as text: TOML a user can paste, and a new file never written over one."""

from __future__ import annotations

import stat

import pytest
import tomllib
from ranktop.tui.settings.writer import FileExists, toml_text, write_new


def test_tables_of_tables_and_hostile_values_round_trip():
    tables = {
        "prometheus": {"job": 'quote " backslash \\ newline \n del \x7f tab \t é', "n": 2},
        "metrics": {"step_time": {"promql": 'x{job} or y{a="b"}'}},
        "keys": {"app.pause": "space"},
    }
    text = toml_text(tables)
    assert tomllib.loads(text) == tables
    assert "[metrics.step_time]\n" in text and '"app.pause" = "space"' in text


def test_a_new_file_is_written_with_its_folder_and_an_existing_one_never(tmp_path):
    path = tmp_path / "xdg" / "ranktop" / "config.toml"
    write_new(path, "[ranks]\n")
    assert path.read_text() == "[ranks]\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExists, match="never overwritten"):
        write_new(path, "[display]\n")
    assert path.read_text() == "[ranks]\n"

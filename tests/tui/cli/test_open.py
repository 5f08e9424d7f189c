"""`ranktop open`: what is not a bundle is one line and exit 2, never a traceback, and
nothing of it is touched."""

from __future__ import annotations

import pytest
from ranktop.tui.cli.main import main


def test_a_path_that_is_no_bundle_is_one_line_and_exit_2(tmp_path, capsys):
    kept = tmp_path / "notes.txt"
    kept.write_text("mine")
    for given in (kept, tmp_path / "missing.ranktop", tmp_path):
        assert main(["open", str(given)]) == 2
        said = capsys.readouterr().err
        assert said.startswith("ranktop open: ") and said.count("\n") == 1, said
    assert kept.read_text() == "mine" and [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_open_is_listed_with_the_other_subcommands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "ranktop open" in capsys.readouterr().out

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


def test_a_bundle_holding_what_no_bundle_does_is_one_line_and_exit_2(tmp_path, capsys):
    import math

    import msgspec

    from tests.special_files import fifo
    from tests.tui.bundle.hostile import real_bundle

    bundle = real_bundle(tmp_path)
    console = bundle / "console.msgpack"
    raw = msgspec.msgpack.decode(console.read_bytes())
    raw["snapshot"]["analysis"]["frame"]["time"] = math.nan
    console.write_bytes(msgspec.msgpack.encode(raw))
    fifo(tmp_path / "pipe.ranktop")
    for given, said in ((bundle, "frame.time is nan: a time must be between"),
                        (tmp_path / "pipe.ranktop", "is a named pipe (FIFO)")):
        assert main(["open", str(given)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ranktop open: ") and err.count("\n") == 1, err
        assert said in err

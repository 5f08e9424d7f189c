"""One real bundle for the package's tests, and its hostile twin."""

from __future__ import annotations

import shutil

import pytest

from tests.tui.bundle.hostile import hostile, real_bundle


@pytest.fixture(scope="session")
def written(tmp_path_factory):
    """A bundle folder as ranktop wrote it (do not change it: copy it)."""
    return real_bundle(tmp_path_factory.mktemp("written"))


@pytest.fixture(scope="session")
def hostile_bundle(written, tmp_path_factory):
    """``written`` with the hostile corpus in every free text."""
    folder = tmp_path_factory.mktemp("hostile") / written.name
    shutil.copytree(written, folder)
    console = folder / "console.msgpack"
    console.write_bytes(hostile(console.read_bytes()))
    return folder

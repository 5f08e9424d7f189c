"""Paths that are no regular file, made the way a bad day makes them: the log and event-log
abuse tests share them."""

from __future__ import annotations

import os
from pathlib import Path


def fifo(path: Path) -> None:
    os.mkfifo(path)


def loop(path: Path) -> None:
    """A symbolic link loop of two links."""
    path.symlink_to(path.with_name("other"))
    path.with_name("other").symlink_to(path)


def zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def folder(path: Path) -> None:
    path.mkdir()

"""A log its reader may not read, refused by the kernel itself. The tests run as root, whom
file modes do not stop, so the reader is a forked child that gives up root first (its
modules already loaded: it needs no access to the interpreter's files). Its tail is empty,
its status says why, and nothing raises."""

from __future__ import annotations

import errno
import json
import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest
from ranktop.tui.logs.tail import FileLog


def unprivileged_user() -> int | None:
    """A uid file modes apply to, to become; None when this process is not root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("running as root and there is no 'nobody' user to read as")


def read_as(uid: int | None, path: Path) -> dict:
    """What a FileLog of ``path`` gives in a child process running as ``uid``."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # the child: answer on the pipe, never return into pytest
        try:
            os.close(reading)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            log = FileLog(path)
            found = {"tail": len(log.tail(10)), "follow": len(log.follow()),
                     "status": log.status()}
            os.write(writing, json.dumps(found).encode())
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        said = answer.read()
    os.waitpid(child, 0)
    assert said, "the reader died without answering"
    return json.loads(said)


def test_a_log_that_may_not_be_read_is_an_empty_tail_and_a_status():
    uid = unprivileged_user()
    folder = Path(tempfile.mkdtemp(prefix="ranktop-permission-"))
    try:
        folder.chmod(0o755)  # the folder may be entered, the file not read
        log = folder / "rank0.log"
        log.write_text("[rank 0] step 1 loss 2.1\n")
        log.chmod(0o000)
        found = read_as(uid, log)
        assert found == {"tail": 0, "follow": 0,
                         "status": f"error: {os.strerror(errno.EACCES)}"}
        log.chmod(0o644)
        assert read_as(uid, log)["tail"] == 1  # the same reader, once it may
    finally:
        shutil.rmtree(folder, ignore_errors=True)

"""``python -m ranktop`` is the ``ranktop`` command: the same answers, the same exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "ranktop"


def answer(command: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=cwd)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["--no-such-flag"]],
                         ids=["version", "help", "bad-flag"])
def test_python_m_ranktop_answers_as_the_command_does(tmp_path, args):
    # From another folder: the installed package answers, not the checkout's folders.
    module = answer([sys.executable, "-m", "ranktop", *args], tmp_path)
    script = answer([str(SCRIPT), *args], tmp_path)
    assert module == script
    assert ("Traceback" in module[1]) is False

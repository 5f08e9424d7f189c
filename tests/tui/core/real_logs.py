"""Rank logs a real gloo job wrote (``fixtures/gloo``, its README says how), read back."""

from __future__ import annotations

from pathlib import Path

GLOO = Path(__file__).parent / "fixtures" / "gloo"


def gloo_logs(scenario: str) -> dict[int, list[str]]:
    """Each rank's lines of one recorded scenario ("frozen", "killed", "user_error")."""
    files = sorted((GLOO / scenario).glob("rank*.log"))
    return {int(path.stem.removeprefix("rank")): path.read_text("utf-8").splitlines()
            for path in files}

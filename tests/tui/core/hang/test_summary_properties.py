"""Property test: the few lines triage keeps of a rank (``evidence_lines``) give the same
evidence as all its lines, whatever the lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.hang.scan import RankLog
from ranktop.tui.core.hang.summary import _own_words, evidence_lines
from ranktop.tui.core.watchdog import Ending

from tests.tui.properties import FEW, LINES


def log_of(lines: list[str], fatal: str) -> RankLog:
    log = RankLog()
    log.lines = lines
    log.end = Ending("fault" if fatal else "", "", fatal)
    return log


@FEW
@given(st.lists(LINES, max_size=40), st.integers(-1, 40), st.booleans())
def test_the_kept_lines_give_the_same_evidence(lines, fatal_at, strip):
    fatal = lines[fatal_at] if 0 <= fatal_at < len(lines) else ""
    fatal = fatal.rstrip("\r\n") if strip else fatal
    kept = evidence_lines(lines, fatal)
    assert _own_words(log_of(kept, fatal)) == _own_words(log_of(lines, fatal))
    assert len(kept) <= 7

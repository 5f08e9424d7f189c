"""The job's last checkpoint: the step a restart would resume from.

Read from a metric where the job exports one (``[job_metrics] checkpoint_step``, in
``frame.job``), else from the newest "saved checkpoint" line hang triage reads in the ranks'
logs. The lines of the common trainers are recognised by ``DEFAULT_PATTERN``:

- Megatron-LM: ``successfully saved checkpoint from iteration    1200 to /ckpt``
- torchtitan and DCP: ``Saving checkpoint at step 1200``, or a save naming a folder
  ``.../step-1200``
- Lightning: ``... saving model to '/ckpt/epoch=0-step=1200.ckpt' as top 1``

A job that says it another way sets ``[logs] checkpoint_pattern``: one regular expression
with a named group ``step`` (``checkpoint_pattern`` checks it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model import as_count, is_missing

CHECKPOINT_KEY = "checkpoint_step"  # the [job_metrics] key, and frame.job's
METRIC, LOG = "checkpoint metric", "log"  # where a checkpoint was read
# A save word, then (on the same line) the step: "iteration N", "at step N", or a path's
# "step-N" / "step=N" / "step_N".
DEFAULT_PATTERN = (r"\b[Ss]av(?:ed|ing)\b[^\n]*?"
                   r"(?:\biteration\s+|\bat step\s+|[/\\=_-]step[-_=])(?P<step>\d+)")
# What a line must hold for DEFAULT_PATTERN to match it: looked for first, as plain text (a
# regular expression starting with a word boundary is slow to search for; most ranks' logs
# hold no save at all).
DEFAULT_NEEDS = ("aved", "aving")
STEP_GROUP = "step"
HOW_TO_CONFIGURE = (f"export the job's last saved step as [job_metrics] {CHECKPOINT_KEY}, "
                    "or give the ranks' logs ([logs] spec) and, for a line of the job's own,"
                    " [logs] checkpoint_pattern")


@dataclass(frozen=True)
class Checkpoint:
    """A saved step and where ranktop read it (``METRIC`` or ``LOG``)."""

    step: int
    source: str
    line: str = ""  # the log line it was read from
    rank: int | None = None  # whose log held that line


def checkpoint_pattern(text: str) -> re.Pattern[str]:
    """The configured pattern compiled (the default when blank); ValueError, in one line,
    when it is not a regular expression or has no group named ``step``."""
    if not text.strip():
        text = DEFAULT_PATTERN
    try:
        pattern = re.compile(text)
    except re.error as error:
        raise ValueError(f"not a regular expression: {error}") from None
    if STEP_GROUP not in pattern.groupindex:
        raise ValueError(f"needs a named group (?P<{STEP_GROUP}>...) around the step number")
    return pattern


DEFAULT = checkpoint_pattern(DEFAULT_PATTERN)


def newest_in_lines(lines: Sequence[str], pattern: re.Pattern[str] = DEFAULT,
                    rank: int | None = None) -> Checkpoint | None:
    """The newest checkpoint line of a rank's lines (oldest first), or None. The lines are
    searched as one text, in one pass: most ranks' logs hold no such line."""
    blob = "\n".join(lines)
    if pattern.pattern == DEFAULT_PATTERN and not any(word in blob for word in DEFAULT_NEEDS):
        return None
    steps = [(found, step) for found in pattern.finditer(blob)
             if (step := _step(found)) is not None]
    if not steps:
        return None
    last, step = steps[-1]
    start = blob.rfind("\n", 0, last.start()) + 1
    end = blob.find("\n", last.end())
    line = blob[start:] if end < 0 else blob[start:end]
    return Checkpoint(step, LOG, line.strip(), rank)


def newer(a: Checkpoint | None, b: Checkpoint | None) -> Checkpoint | None:
    """The later of two checkpoints (the higher step), either may be None."""
    if a is None or b is None:
        return a or b
    return b if b.step > a.step else a


def from_metric(job: Mapping[str, float] | None) -> Checkpoint | None:
    """The checkpoint the job's metric says, when exported."""
    value = as_count((job or {}).get(CHECKPOINT_KEY, float("nan")))
    return None if is_missing(value) else Checkpoint(int(value), METRIC)


def _step(found: re.Match[str]) -> int | None:
    digits = found.group(STEP_GROUP) or ""
    return int(digits) if digits.isdigit() else None

"""Where each rank's Flight Recorder dump is, from the user's pattern.

The pattern (``--flight-recorder``, ``[logs] flight_recorder``) is one of:

- a path with ``{rank}`` and, anywhere, shell globs: ``/shared/fr/*/trace_rank_{rank}``;
- a directory: PyTorch's default file names in it, ``comm_lib_trace_rank_<rank>`` (PyTorch
  2.6 on) and ``nccl_trace_rank_<rank>`` (before), the way ``TORCH_FR_DUMP_TEMP_FILE`` /
  ``TORCH_NCCL_DEBUG_INFO_TEMP_FILE`` name them when pointed there;
- any other path: a prefix, to which each rank appends its number (as those variables do).

The folder is listed once, whatever the number of ranks; where several files match one rank,
the newest is its dump. Pipe files (``<prefix><rank>.pipe``) never match.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

RANK = "{rank}"
DEFAULT_NAMES = ("comm_lib_trace_rank_", "nccl_trace_rank_")


class PatternError(ValueError):
    """A pattern that cannot name each rank's dump; the message is one line."""


def check_pattern(pattern: str) -> None:
    """Raise PatternError when ``pattern`` holds a placeholder other than ``{rank}``."""
    other = re.search(r"\{(?!rank\})[^{}]*\}", pattern)
    if other:
        raise PatternError(f"unknown placeholder {other.group(0)[:40]!r}: only {RANK} is known")
    if not pattern.strip():
        raise PatternError("empty pattern")
    if any(ord(c) < 0x20 or c == "\x7f" for c in pattern):
        raise PatternError("holds a control character")


def patterns_for(pattern: str) -> list[str]:
    """The patterns with ``{rank}`` that the user's pattern stands for."""
    check_pattern(pattern)
    pattern = os.path.expanduser(pattern)
    if RANK in pattern:
        return [pattern]
    if os.path.isdir(pattern) or pattern.endswith(os.sep):
        return [os.path.join(pattern, f"{name}{RANK}") for name in DEFAULT_NAMES]
    return [pattern + RANK]


def find_dumps(pattern: str, world_size: int) -> dict[int, Path]:
    """Each rank's dump file (the newest that matches), for ranks in ``range(world_size)``;
    raises PatternError for a bad pattern, never OSError."""
    found: dict[int, tuple[float, Path]] = {}
    for one in patterns_for(pattern):
        try:
            matcher = _matcher(one)
            hits = list(glob.iglob(one.replace(RANK, "*")))
        except re.error as error:
            raise PatternError(f"bad glob: {error}") from None
        except (OSError, ValueError) as error:
            raise PatternError(f"cannot look: {error}") from None
        for hit in hits:
            match = matcher.fullmatch(hit)
            if match is None:
                continue
            ranks = {int(v) for v in match.groups() if len(v) < 10}
            if len(ranks) != 1:
                continue
            rank = ranks.pop()
            if not 0 <= rank < world_size:
                continue
            try:
                mtime = os.stat(hit).st_mtime
            except OSError:
                continue
            if rank not in found or mtime > found[rank][0]:
                found[rank] = (mtime, Path(hit))
    return {rank: path for rank, (_, path) in sorted(found.items())}


def _matcher(pattern: str) -> re.Pattern[str]:
    """A regex for the paths ``pattern`` matches, one group per ``{rank}``."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith(RANK, i):
            out.append(r"(\d+)")
            i += len(RANK)
            continue
        char = pattern[i]
        if char == "*":
            out.append(r"[^/]*")
        elif char == "?":
            out.append(r"[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            body = body.replace("\\", "\\\\").replace("[", "\\[")
            out.append(f"[{body}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out))

"""Hardware faults that a restart does not mend: an XID whose fix is a GPU reset or a drain,
an uncorrectable ECC error. When a rank that died with one comes back (the job restarted)
its XID series may read 0 again, but the GPU has not been reset: the fault keeps its row,
and so its action, for the hardware ledger's window after the rank came back, marked
"before the restart". An XID of the application's (or one NVIDIA says to ignore) ends with
the process that raised it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..xid import IGNORE, xid
from .hardware import WINDOW_SECONDS

BEFORE_RESTART = "before the restart"
FIGURES = "xid_codes"  # the name whose faults are XID codes, the others' figures


def mended_by_restart(code: int) -> bool:
    """Whether restarting the job clears XID ``code`` (unknown codes: assumed so)."""
    known = xid(code)
    return known is None or not known.hardware or known.resolution == IGNORE


class LastingFaults:
    """The faults of ranks back from the dead that no restart mends, each until its time."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], tuple[float, str]] = {}  # -> (until, text)

    def update(self, now: float, name: str, found: Mapping[object, str],
               before: Mapping[object, str], codes_before: Mapping[object, str],
               was_up: Sequence[bool], up: Sequence[bool]) -> dict[object, str]:
        """The lasting faults of ``name`` to add to ``found`` (this poll's): ``before`` the
        last poll's faults, ``codes_before`` its XID codes by rank, ``was_up`` and ``up``
        the ranks up then and now."""
        for rank, text in before.items():
            back = (isinstance(rank, int) and rank < min(len(up), len(was_up))
                    and up[rank] and not was_up[rank])
            if back and rank not in found and _lasting(name, codes_before.get(rank)):
                marked = text if name == FIGURES else f"{text} ({BEFORE_RESTART})"
                self._kept[(name, rank)] = (now + WINDOW_SECONDS, marked)
        for key, (until, _) in list(self._kept.items()):
            if until <= now or key[1] in found:  # its time is up, or a new fault is shown
                del self._kept[key]
        return {rank: text for (kept, rank), (_, text) in self._kept.items() if kept == name}


def _lasting(name: str, code: str | None) -> bool:
    if name == "ecc":
        return True
    try:
        return not mended_by_restart(int(code or ""))
    except ValueError:
        return False

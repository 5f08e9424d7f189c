"""What the engine's fleet side hands the screens: one frozen value per refresh of the jobs
list (plain values only: a screen that shows it imports no source)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.fleet import JobRow, unhealthy


@dataclass(frozen=True)
class FleetSnapshot:
    """One refresh of the list: the rows worst first, or why there are none."""

    version: int
    rows: tuple[JobRow, ...] = ()
    time: float | None = None  # when it was read (None: not yet)
    recorded: bool = False
    error: str = ""  # the list could not be read at all
    not_answered: dict[str, str] = field(default_factory=dict)  # figure -> why

    @property
    def unhealthy(self) -> int:
        return unhealthy(self.rows)

"""PyTorch Flight Recorder dumps, as the hang triage needs them.

A dump (one per rank, written when the NCCL watchdog fires, or by the job itself: gloo never
dumps on its own) holds the rank's last collectives of every process group; the reader
(``ranktop.tui.flight.reader``) turns each file into a compact ``RankDump`` and the set of
them into a ``DumpSet``, which
``ranktop.tui.core.hang.flight_triage`` judges. Only what the triage uses is kept: the group
membership (``pg_config``), each group's sequence-id frontier (``pg_status``), and a bounded
number of entries per group around where the rank stopped.

Every string here came from a file that any process of the job could have written: show it
as plain text, never as markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

STATES = ("scheduled", "started", "completed")
# How a dump says that a collective completed: by its ``state`` (NCCL's watchdog moves it to
# started, then completed); only by ``retired`` (a hook records the collective and retires
# it once it ends, failed or not: every entry of PyTorch 2.14's gloo stays "scheduled"); or
# not at all.
BY_STATE, BY_RETIRED, NOT_SAID = "state", "retired", "not said"


@dataclass(frozen=True)
class Entry:
    """One recorded collective (or point-to-point operation) of one rank."""

    record_id: int  # the rank's own order of recording
    group: str  # the process group's name (pg_config's key, ``process_group[0]``)
    seq: int  # collective_seq_id: advances per collective of the whole group
    op: str  # profiling_name, e.g. "nccl:all_reduce" or "nccl:send 1->2"
    state: str  # scheduled / started / completed
    input_sizes: tuple[tuple[int, ...], ...] = ()
    output_sizes: tuple[tuple[int, ...], ...] = ()
    input_dtypes: tuple[str, ...] = ()
    output_dtypes: tuple[str, ...] = ()
    is_p2p: bool = False
    call_site: str = ""  # the innermost frame outside torch: "file:line in function"

    def shape(self) -> tuple:
        """What every member of a collective must agree on, but its state."""
        return (self.op, self.input_sizes, self.output_sizes, self.input_dtypes,
                self.output_dtypes)

    def sizes_text(self) -> str:
        """The input sizes and dtypes, short: ``[6553600] float32``."""
        sizes = ", ".join("[" + ", ".join(map(str, s)) + "]" for s in self.input_sizes[:4])
        more = f", +{len(self.input_sizes) - 4}" if len(self.input_sizes) > 4 else ""
        dtypes = sorted(set(self.input_dtypes))
        return f"{sizes}{more} {'/'.join(dtypes[:3])}".strip()


@dataclass(frozen=True)
class Frontier:
    """How far a rank got in one group: the last collective it enqueued, saw start and saw
    complete (pg_status; None where the dump does not say)."""

    enqueued: int | None = None
    started: int | None = None
    completed: int | None = None


@dataclass(frozen=True)
class Group:
    name: str
    desc: str
    ranks: tuple[int, ...]  # global ranks, sorted

    @property
    def label(self) -> str:
        """``pg 0 (default_pg)``: its name, and the description when it has one."""
        desc = "" if self.desc in ("", "undefined") else f" ({self.desc})"
        return f"pg {self.name}{desc}"


@dataclass(frozen=True)
class RankDump:
    """What one rank's dump says, reduced to what the triage uses."""

    rank: int
    path: str
    version: str
    groups: Mapping[str, Group]
    frontiers: Mapping[str, Frontier]  # by group name
    entries: tuple[Entry, ...]  # the kept ones, in the rank's recording order
    total_entries: int  # in the file
    mtime: float = 0.0
    completion: str = BY_STATE  # how the dump says a collective completed

    def in_group(self, group: str) -> list[Entry]:
        return [e for e in self.entries if e.group == group and not e.is_p2p]

    def frontier(self, group: str) -> Frontier:
        """pg_status when the dump has it, else what its entries show."""
        known = self.frontiers.get(group)
        if known is not None and known.enqueued is not None:
            return known
        entries = self.in_group(group)
        if not entries:
            return Frontier()
        done = [e.seq for e in entries if e.state == "completed"]
        begun = [e.seq for e in entries if e.state != "scheduled"]
        return Frontier(max(e.seq for e in entries), max(begun, default=None),
                        max(done, default=None))

    def stopped_at(self) -> Entry | None:
        """Where the rank stopped: the oldest collective it recorded and did not see
        complete. Where only ``retired`` says completion, a collective that failed (a
        timeout, a peer gone) is retired too: with none pending, the rank stopped at its
        newest; so it did where nothing says completion. None: nothing pending in a dump
        whose states say so (no hang in it)."""
        collectives = [e for e in self.entries if not e.is_p2p]
        pending = next((e for e in collectives if e.state != "completed"), None)
        if self.completion == BY_STATE or (pending and self.completion == BY_RETIRED):
            return pending
        return collectives[-1] if collectives else None


@dataclass(frozen=True)
class DumpSet:
    """Every rank's dump that could be read, and what could not be, and why."""

    world_size: int
    dumps: Mapping[int, RankDump]
    errors: Mapping[int, str] = field(default_factory=dict)  # rank -> one line
    notes: tuple[str, ...] = ()  # limits applied while reading

    @property
    def missing(self) -> list[int]:
        """Ranks with no dump read (none found, or unreadable)."""
        return [r for r in range(self.world_size) if r not in self.dumps]

    @property
    def written(self) -> tuple[float, float] | None:
        """When the first and the last dump read were written (seconds since the epoch)."""
        times = [d.mtime for d in self.dumps.values() if d.mtime > 0]
        return (min(times), max(times)) if times else None

    @property
    def absent(self) -> list[int]:
        """Ranks for which no file was found at all."""
        return [r for r in self.missing if r not in self.errors]

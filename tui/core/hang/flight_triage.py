"""Hang triage from Flight Recorder dumps: which rank the others wait for, in which group, at
which collective, and from which line of Python.

``analyse_dumps`` follows the official analyzer's rules (incident-signals §1) on the compact
dumps of ``ranktop.tui.core.hang.flight``:

- Each rank is stuck at its oldest collective not seen complete (its first pending entry);
  where a dump says completion only by ``retired`` (gloo in PyTorch 2.14: a collective that
  timed out is retired too) and none is pending, at its newest (``RankDump.stopped_at``).
- **Wavefront**: the process group most ranks are stuck in decides whom to blame; ranks
  stuck in other groups wait downstream of it and are listed, not blamed.
- In that group the collective most of them wait in (its ``collective_seq_id``) is the one
  judged. Its members are then, in order of strength:
  **missing** - they never enqueued it (their ``pg_status`` frontier, or entries, end before
  it): they are the culprits, with the call site of where they are instead;
  **mismatched** - they enqueued it with another operation, sizes or dtypes than most:
  culprits, with their call site; **behind in state** - their entry was only scheduled
  while the others' started (their GPU never reached it);
  **without a dump** - blamed only when every member with a dump waits (or stopped) there
  and agrees: a frozen or dead rank writes none;
  otherwise all wait in the same collective and no rank stands out.
The communication library is named from the operation (``gloo:all_reduce``): a gloo job is
not told to suspect NCCL.
Point-to-point operations are left out: they match by ``p2p_seq_id`` between two ranks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..text import ranks_named
from .flight import DumpSet, Entry, Group

NAMED = 5  # ranks named in a summary
# Ranks without a dump are blamed only when this few: a dead or frozen rank writes none, but
# many ranks without one are dumps still landing, and blaming them would name the wrong ranks.
NO_DUMP_BLAMED_AT_MOST = 8
# The communication libraries by their operations' prefix, as a summary names them.
LIBRARIES = {"nccl": "NCCL", "gloo": "gloo's TCP transport", "ucc": "UCC", "mpi": "MPI",
             "xccl": "XCCL"}


@dataclass(frozen=True)
class FlightVerdict:
    """What the dumps say; ``culprits`` is empty when no rank stands out."""

    kind: str  # missing, mismatch, state, no_dump, landing, all_stuck or clear
    culprits: tuple[int, ...] = ()
    group: str = ""  # "pg 0 (default_pg)"
    group_size: int = 0
    seq: int | None = None
    op: str = ""  # "nccl:all_reduce"
    sizes: str = ""  # "[6553600] float32", of the collective the others wait in
    call_site: str = ""  # the culprit's, "train.py:120 in step"
    waiting_call_site: str = ""  # where the waiting ranks are
    waiting: tuple[int, ...] = ()  # ranks waiting in the collective
    missing_dumps: tuple[int, ...] = ()  # no file found
    unreadable: Mapping[int, str] = field(default_factory=dict)  # rank -> why
    downstream: tuple[str, ...] = ()  # other stuck groups, not blamed
    evidence: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    summary: str = ""
    notes: tuple[str, ...] = ()
    written: tuple[float, float] | None = None  # when the first and last dump were written


def analyse_dumps(dumps: DumpSet) -> FlightVerdict | None:
    """The verdict of the dumps read; None when none could be read."""
    if not dumps.dumps:
        return None
    groups, notes = _membership(dumps)
    notes += list(dumps.notes)
    stuck = {r: e for r, d in sorted(dumps.dumps.items()) if (e := d.stopped_at())}
    missing = tuple(dumps.absent)
    unreadable = dict(dumps.errors)
    if not stuck:
        return FlightVerdict("clear", missing_dumps=missing, unreadable=unreadable,
                             summary="the dumps show no collective pending: no hang in them"
                             + _lacking(missing, unreadable), notes=tuple(notes),
                             written=dumps.written)
    per_group = Counter(e.group for e in stuck.values())
    wave = min(per_group, key=lambda g: (-per_group[g], g))
    group = groups.get(wave) or Group(wave, "", tuple(sorted(
        r for r, e in stuck.items() if e.group == wave)))
    judged = _Judged(dumps, group, stuck)
    downstream = tuple(f"{groups[g].label if g in groups else f'pg {g}'}: {n} ranks"
                       for g, n in sorted(per_group.items()) if g != wave)
    return replace(judged.verdict(missing, unreadable, downstream, tuple(notes)),
                   written=dumps.written)


def _membership(dumps: DumpSet) -> tuple[dict[str, Group], list[str]]:
    """Every group from every dump's pg_config; the first dump's word where they disagree."""
    groups: dict[str, Group] = {}
    notes: list[str] = []
    for rank, dump in sorted(dumps.dumps.items()):
        for name, group in dump.groups.items():
            known = groups.setdefault(name, group)
            if known.ranks != group.ranks and len(notes) < NAMED:
                notes.append(f"rank {rank}'s dump gives {group.label} other members than the"
                             f" others' ({len(group.ranks)} vs {len(known.ranks)})")
    return groups, notes


class _Judged:
    """One group's members, sorted by how they stand at the collective most wait in."""

    def __init__(self, dumps: DumpSet, group: Group, stuck: dict[int, Entry]) -> None:
        self.dumps, self.group = dumps, group
        self.members = [r for r in group.ranks if 0 <= r < dumps.world_size]
        here = {r: e for r, e in stuck.items() if e.group == group.name}
        self.seq = Counter(e.seq for e in here.values()).most_common(1)[0][0]
        self.at_seq = {r: e for r, e in here.items() if e.seq == self.seq}
        shapes = Counter(e.shape() for e in self.at_seq.values())
        self.shape, self.shape_count = shapes.most_common(1)[0]
        self.tied = len(shapes) > 1 and shapes.most_common(2)[1][1] == self.shape_count
        self.typical = next(e for e in self.at_seq.values() if e.shape() == self.shape)
        self.stuck = stuck

    def missing(self) -> list[int]:
        """Members with a dump that never enqueued the collective, or are stuck before it."""
        found = []
        for rank in self.members:
            dump = self.dumps.dumps.get(rank)
            if dump is None or rank in self.at_seq:
                continue
            enqueued = dump.frontier(self.group.name).enqueued
            pending = self.stuck.get(rank)
            if enqueued is None or enqueued < self.seq or (
                    pending is not None and pending.group == self.group.name
                    and pending.seq < self.seq):
                found.append(rank)
        return found

    def mismatched(self) -> tuple[list[int], str]:
        odd = sorted(r for r, e in self.at_seq.items() if e.shape() != self.shape)
        if not odd:
            return [], ""
        first = self.at_seq[odd[0]]
        what = ("operation" if first.op != self.typical.op else
                "sizes" if (first.input_sizes, first.output_sizes) != (
                    self.typical.input_sizes, self.typical.output_sizes) else "dtypes")
        theirs = first.op if what == "operation" else first.sizes_text()
        ours = self.typical.op if what == "operation" else self.typical.sizes_text()
        return odd, f"{what} {theirs} where the others have {ours}"

    def late_state(self) -> list[int]:
        states = {e.state for e in self.at_seq.values()}
        if states != {"scheduled", "started"}:
            return []
        return sorted(r for r, e in self.at_seq.items() if e.state == "scheduled")

    def verdict(self, missing_dumps: tuple[int, ...], unreadable: dict[int, str],
                downstream: tuple[str, ...], notes: tuple[str, ...]) -> FlightVerdict:
        no_dump = [r for r in self.members if r not in self.dumps.dumps]
        where = (f"{self.typical.op} SeqNum {self.seq} of {self.group.label}")
        waiting = sorted(self.at_seq)
        count = f"{len(waiting)} of {len(self.members)} ranks"
        # A collective retired (gloo: timed out, or a peer gone) is no longer waited in.
        retired = any(e.state == "completed" for e in self.at_seq.values())
        wait = "stopped at" if retired else "wait in"
        missing = self.missing()
        odd, odd_what = self.mismatched()
        evidence: dict[int, tuple[str, ...]] = {}
        if missing:
            kind, culprits = "missing", missing
            text = (f"{ranks_named(missing)} never joined {where}, at which {count}"
                    f" {wait.split()[0]}; {self._elsewhere(missing[0])}")
        elif odd:
            kind, culprits = "mismatch", odd
            text = (f"{ranks_named(odd)} entered {where} with another {odd_what}"
                    + (" (as many ranks on each side)" if self.tied else ""))
        elif late := self.late_state():
            kind, culprits = "state", late
            text = (f"{ranks_named(late)} never started {where} on the GPU (scheduled only), "
                    "while the others started it")
        elif len(no_dump) > NO_DUMP_BLAMED_AT_MOST:
            kind, culprits = "landing", []
            text = (f"{count} {wait} {where}; {len(no_dump)} ranks' dumps are not read yet"
                    " (still landing?): too many to blame")
        elif no_dump:
            kind, culprits = "no_dump", no_dump
            text = (f"{count} {wait} {where}; {ranks_named(no_dump)} wrote no dump"
                    " (frozen or dead, or its dump has not landed)")
        else:
            kind, culprits = "all_stuck", []
            text = (f"all {count} {wait} {where}: no rank stands out"
                    f" (network or {_library(self.typical.op)}?)")
        for rank in culprits[:NAMED * 4]:
            evidence[rank] = self._evidence(rank)
        for rank in waiting[:2]:
            evidence.setdefault(rank, self._evidence(rank))
        culprit_entry = self._site_of(culprits[0]) if culprits else None
        text += _lacking(missing_dumps, unreadable, set(culprits) if kind == "no_dump" else ())
        return FlightVerdict(
            kind=kind, culprits=tuple(culprits), group=self.group.label,
            group_size=len(self.members), seq=self.seq, op=self.typical.op,
            sizes=self.typical.sizes_text(),
            call_site=culprit_entry.call_site if culprit_entry else "",
            waiting_call_site=self.typical.call_site, waiting=tuple(waiting),
            missing_dumps=missing_dumps, unreadable=unreadable, downstream=downstream,
            evidence=evidence, summary=text, notes=notes)

    def _site_of(self, rank: int) -> Entry | None:
        """The culprit's entry that says where it is: at the collective, else where it is
        stuck, else its last in the group."""
        if rank in self.at_seq:
            return self.at_seq[rank]
        dump = self.dumps.dumps.get(rank)
        if dump is None:
            return None
        if rank in self.stuck:
            return self.stuck[rank]
        entries = dump.in_group(self.group.name)
        return entries[-1] if entries else None

    def _elsewhere(self, rank: int) -> str:
        entry = self._site_of(rank)
        frontier = self.dumps.dumps[rank].frontier(self.group.name)
        last = f"its last here is SeqNum {frontier.enqueued}" if frontier.enqueued is not None \
            else "it has no collective of this group"
        if entry is None:
            return last
        state = "is stuck in" if entry.state != "completed" else "last recorded"
        group = "" if entry.group == self.group.name else f" of pg {entry.group}"
        site = f" at {entry.call_site}" if entry.call_site else ""
        return f"{last}; it {state} {entry.op} SeqNum {entry.seq}{group}{site}"

    def _evidence(self, rank: int) -> tuple[str, ...]:
        dump = self.dumps.dumps.get(rank)
        if dump is None:
            return ("no dump",)
        front = dump.frontier(self.group.name)
        lines = [f"{self.group.label}: last enqueued {_n(front.enqueued)}, started"
                 f" {_n(front.started)}, completed {_n(front.completed)}"
                 f" (dump {dump.version or 'of unknown version'})"]
        entry = self._site_of(rank)
        if entry is not None:
            site = f" at {entry.call_site}" if entry.call_site else ""
            lines.append(f"{entry.state} {entry.op} SeqNum {entry.seq} of pg {entry.group}:"
                         f" {entry.sizes_text()}{site}")
        return tuple(lines)


def _library(op: str) -> str:
    """The communication library of an operation (``gloo:all_reduce``), as said to a user."""
    prefix = op.split(":", 1)[0].lower() if ":" in op else ""
    return LIBRARIES.get(prefix, prefix or "the communication library")


def _n(value: int | None) -> str:
    return "?" if value is None else str(value)


def _lacking(absent: tuple[int, ...], unreadable: Mapping[int, str],
             said: set[int] | tuple = ()) -> str:
    parts = []
    unsaid = [r for r in absent if r not in said]
    if unsaid:
        parts.append(f"no dump found for {ranks_named(unsaid)}")
    if unreadable:
        rank, why = next(iter(sorted(unreadable.items())))
        more = f" and {len(unreadable) - 1} more" if len(unreadable) > 1 else ""
        parts.append(f"unreadable dump for rank {rank}{more}: {why}")
    return "".join(f"; {p}" for p in parts)

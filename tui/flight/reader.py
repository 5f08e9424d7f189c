"""Every rank's Flight Recorder dump, read within a budget and reduced to what triage needs.

``read_dumps(pattern, world_size, budget)`` is a pure function of the files (blocking: call
it from a worker thread, never from the UI's): it finds each rank's dump
(``dump_paths``), reads it - pickled through ``unpickle.load_plain``, which runs nothing,
or JSON - and keeps a compact ``RankDump``. Files are read one at a time, and each is
reduced before the next is opened, so memory holds one file's data at most beside the
compact dumps; the readable ones first, and the slow ones within one time budget
(``timed_parse``).

The budget bounds the work, and what it cut is said in ``DumpSet.notes``:

- a file larger than ``max_file_bytes`` is not read (an error for that rank);
- files are read until ``max_total_bytes`` have been; the rest are errors;
- at most ``max_entries`` entries of a dump are looked at (the newest: the buffer is a ring);
- per group, ``kept_per_group`` entries are kept: the oldest not seen complete, the
  last two completed and the newest.

Formats: any dump version 2.x - ``collective_seq_id`` or the older ``seq_id``, ``ranks``
as a string or a list, ``pg_status`` numbers as ints (pickle) or strings (JSON), no
``input_dtypes`` before 2.3, ``frames`` only in pickled dumps; completion said by each
entry's ``state`` (NCCL's watchdog) or only by ``retired`` (PyTorch 2.14's gloo, whose
entries all stay "scheduled"), see ``flight.BY_STATE``; the groups under the entries' names
(``groups``). Every string kept is made safe to display (``plain``) and cut short. A rank
whose file cannot be read gets a one-line error; nothing else escapes but ``PatternError``
for a bad pattern.
"""

from __future__ import annotations

import json
import re
import stat as file_stat
import time
from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.hang.flight import (
    BY_RETIRED,
    BY_STATE,
    NOT_SAID,
    STATES,
    DumpSet,
    Entry,
    Group,
    RankDump,
)
from ..core.outside_file import FileTooLarge, read_regular
from ..core.text import plain
from .dump_paths import find_dumps
from .groups import dump_groups, frontiers, shared_groups
from .parse_child import DumpParser
from .timed_parse import Pending, parse_within
from .unpickle import DumpError, load_plain
from .values import number, text

MIB = 1 << 20
TORCH_FILES = re.compile(r"(?:^|/)torch/|^<")  # frames inside PyTorch, or not from a file


@dataclass(frozen=True)
class ReadBudget:
    max_file_bytes: int = 64 * MIB
    max_total_bytes: int = 4096 * MIB
    max_entries: int = 20_000
    kept_per_group: int = 16
    max_frames: int = 64
    parse_seconds: float = 20.0  # one file's parse, in its child process (``parse_child``)
    first_seconds: float = 1.0  # a file's first try, before the slow ones get the rest
    total_seconds: float = 30.0  # lost to files too slow to parse, in one read (timed_parse)


BUDGET = ReadBudget()

# (path, size, mtime_ns) -> what reading it gave; the caller keeps it between reads.
Cache = MutableMapping[tuple[str, int, int], "RankDump | str"]


def read_dumps(pattern: str, world_size: int, budget: ReadBudget = BUDGET, *,
               cache: Cache | None = None, since: float | None = None,
               earlier: Collection[tuple[str, int, int]] = (),
               until: float | None = None, clock: Callable[[], float] = time.monotonic,
               readable: Callable[[DumpSet], None] | None = None) -> DumpSet:
    """Each rank's dump that ``pattern`` finds, read within ``budget`` (see the module).

    Files last written before ``since`` (seconds since the epoch) are left out: a dump of an
    earlier hang says nothing of this one; so are the files of ``earlier`` (cache keys read
    during an earlier hang, unchanged since). ``cache`` keeps what each file gave between
    calls, so a file is parsed again only once it changes. Files last written after
    ``until`` are left out too: a past moment is judged by the dumps that were there.
    Where some files are slow to parse, ``readable`` is given the dumps read before them
    (``timed_parse``), the slow ones "still being read"."""
    paths = find_dumps(pattern, world_size)
    dumps: dict[int, RankDump] = {}
    errors: dict[int, str] = {}
    notes: set[str] = set()
    read, stale = 0, 0
    seen: set[tuple[str, int, int]] = set()
    keys: dict[int, tuple[str, int, int]] = {}
    pending: list[Pending] = []
    groups: dict[Group, Group] = {}

    def settle(rank: int, known: RankDump | str, keep: bool) -> None:
        if not isinstance(known, str):
            known = shared_groups(known, groups)
        if cache is not None and keep:
            cache[keys[rank]] = known
        if isinstance(known, str):
            errors[rank] = known
        else:
            dumps[rank] = known
            if known.total_entries > budget.max_entries:
                notes.add(f"looked at the newest {budget.max_entries} entries of each dump")

    for rank, path in paths.items():
        try:
            stat = path.stat()
        except OSError as error:
            errors[rank] = f"{plain(path.name)}: {error.strerror or error}"
            continue
        if not file_stat.S_ISREG(stat.st_mode):
            errors[rank] = f"{plain(path.name)}: not a regular file (a FIFO?): not read"
            continue
        if since is not None and stat.st_mtime < since:
            stale += 1
            continue
        if until is not None and stat.st_mtime > until:
            continue
        key = keys[rank] = (str(path), stat.st_size, stat.st_mtime_ns)
        if key in earlier:
            stale += 1
            continue
        seen.add(key)
        known = cache.get(key) if cache is not None else None
        if known is not None:
            settle(rank, known, True)
        elif stat.st_size > budget.max_file_bytes:
            settle(rank, f"{plain(path.name)}: {stat.st_size // MIB} MiB, over the"
                         f" {_mib(budget)} limit", True)
        elif read + stat.st_size > budget.max_total_bytes:
            notes.add(f"stopped reading after {read // MIB} MiB of dumps (the budget)")
            errors[rank] = (f"{plain(path.name)}: not read, the budget for all dumps"
                            " was spent")
        else:
            read += stat.st_size
            pending.append((rank, path, stat.st_mtime))

    def between(slow: Sequence[int]) -> None:
        if readable is not None:
            still = {rank: "still being read (slow to parse)" for rank in slow}
            readable(DumpSet(world_size, dict(dumps), {**errors, **still}, tuple(notes)))

    with DumpParser(budget) as parser:
        ran_out = parse_within(parser, pending, budget, clock, settle, between)
    if ran_out:
        notes.add(ran_out)
    if cache is not None:
        for key in [k for k in cache if k not in seen]:
            del cache[key]
    if stale:
        notes.add(f"ignored {stale} dumps older than the hang")
    return DumpSet(world_size, dict(sorted(dumps.items())), dict(sorted(errors.items())),
                   tuple(sorted(notes)))


def read_one(path: Path, rank: int, budget: ReadBudget = BUDGET,
             mtime: float = 0.0) -> RankDump | str:
    """One rank's dump, or one line saying why it cannot be read (in this process: the
    console reads dumps through ``parse_child``)."""
    try:
        data = read_regular(path, budget.max_file_bytes)
    except FileTooLarge:
        return f"{plain(path.name)}: over the {_mib(budget)} limit"
    except OSError as error:
        return f"{plain(path.name)}: {error.strerror or error}"
    try:
        raw = parse_dump(data)
        return reduce_dump(raw, rank, str(path), budget, mtime)
    except DumpError as error:
        return f"{plain(path.name)}: {plain(str(error))}"


def parse_dump(data: bytes) -> dict:
    """The top-level dict of a dump, JSON or pickled; DumpError otherwise."""
    head = data.lstrip()[:1]
    if head == b"{":
        try:
            loaded = json.loads(data)
        except RecursionError:
            raise DumpError("the JSON nests too deeply") from None
        except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
            raise DumpError(f"not readable JSON ({str(error)[:120]})") from None
    elif not data:
        raise DumpError("empty file (still being written?)")
    else:
        loaded = load_plain(data)
    if not isinstance(loaded, dict):
        raise DumpError(f"a dump is a dict, this is a {type(loaded).__name__}")
    return loaded


def reduce_dump(raw: Mapping, rank: int, path: str, budget: ReadBudget = BUDGET,
                mtime: float = 0.0) -> RankDump:
    """The compact dump of a parsed one; DumpError when it is not a Flight Recorder dump."""
    if "entries" not in raw and "pg_config" not in raw:
        raise DumpError("no 'entries' and no 'pg_config': not a Flight Recorder dump")
    items = raw.get("entries") or []
    if not isinstance(items, list):
        raise DumpError("'entries' is not a list")
    looked = [item for item in items[-budget.max_entries:] if isinstance(item, dict)]
    pg_ids: dict[str, str] = {}
    named: dict[str, str] = {}  # each group name the entries use: its description
    for item in looked:
        pg_id, name = item.get("pg_id"), _group_of(item)
        if name is None:
            continue
        named.setdefault(text(name), _desc_of(item))
        if isinstance(pg_id, int | str):
            pg_ids[str(pg_id)] = text(name)
    completion = _completion(looked)
    kept = (_entry(item, completion, budget)
            for item in _keep(looked, completion, budget.kept_per_group))
    return RankDump(
        rank=rank, path=path, version=text(raw.get("version", "")),
        groups=dump_groups(raw.get("pg_config"), named),
        frontiers=frontiers(raw.get("pg_status"), pg_ids, named),
        entries=tuple(e for e in kept if e is not None), total_entries=len(items), mtime=mtime,
        completion=completion)


def _group_of(item: dict) -> object:
    group = item.get("process_group")
    name = group[0] if isinstance(group, list | tuple) and group else item.get("pg_id")
    return name if isinstance(name, str | int) and not isinstance(name, bool) else None


def _desc_of(item: dict) -> str:
    group = item.get("process_group")
    return text(group[1]) if isinstance(group, list | tuple) and len(group) > 1 else ""


def _completion(items: list[dict]) -> str:
    """How the dump says a collective completed (``flight.BY_STATE`` and its kin)."""
    if any(item.get("state") in ("started", "completed")
           or item.get("time_discovered_started_ns") or item.get("time_discovered_completed_ns")
           for item in items):
        return BY_STATE
    return BY_RETIRED if any("retired" in item for item in items) else NOT_SAID


def _state(item: dict, completion: str) -> str:
    if completion == BY_RETIRED:
        return "completed" if item.get("retired") is True else "scheduled"
    state = item.get("state")
    if state in STATES:
        return state
    return "completed" if item.get("time_discovered_completed_ns") else (
        "started" if item.get("time_discovered_started_ns") else "scheduled")


def _entry(item: dict, completion: str, budget: ReadBudget) -> Entry | None:
    seq = number(item.get("collective_seq_id", item.get("seq_id")))
    name, op = _group_of(item), item.get("profiling_name")
    if seq is None or name is None or not isinstance(op, str):
        return None
    return Entry(
        record_id=number(item.get("record_id")) or 0, group=text(name), seq=seq,
        op=text(op), state=_state(item, completion),
        input_sizes=_sizes(item.get("input_sizes")), output_sizes=_sizes(item.get("output_sizes")),
        input_dtypes=_texts(item.get("input_dtypes")),
        output_dtypes=_texts(item.get("output_dtypes")),
        is_p2p=bool(item.get("is_p2p", " " in op and ("send" in op or "recv" in op))),
        call_site=_call_site(item.get("frames"), budget.max_frames))


def _keep(items: list[dict], completion: str, per_group: int) -> list[dict]:
    """Per group, the oldest entries not seen complete, the last two completed and the
    newest, in the rank's recording order (the rest are never turned into Entries)."""
    pending: dict[object, int] = {}
    done: dict[object, int] = {}
    newest: set[object] = set()
    chosen: set[int] = set()
    for index, item in enumerate(items):
        group = _group_of(item)
        if _state(item, completion) != "completed" and pending.get(group, 0) < per_group:
            pending[group] = pending.get(group, 0) + 1
            chosen.add(index)
    for index in range(len(items) - 1, -1, -1):
        group = _group_of(items[index])
        if group not in newest:
            newest.add(group)
            chosen.add(index)
        if _state(items[index], completion) == "completed" and done.get(group, 0) < 2:
            done[group] = done.get(group, 0) + 1
            chosen.add(index)
    return [items[i] for i in sorted(chosen)]


def _call_site(frames: Any, limit: int) -> str:
    """The innermost frame outside PyTorch: ``file:line in function``."""
    if not isinstance(frames, list):
        return ""
    usable = [f for f in frames[:limit] if isinstance(f, dict)]
    chosen = next((f for f in usable if not TORCH_FILES.search(text(f.get("filename", "")))),
                  usable[0] if usable else None)
    if chosen is None:
        return ""
    where = f"{text(chosen.get('filename', '?'))}:{number(chosen.get('line')) or '?'}"
    name = chosen.get("name")
    return f"{where} in {text(name)}" if name else where


def _sizes(value: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(tuple(d for d in dims[:8] if isinstance(d, int)) for dims in value[:64]
                 if isinstance(dims, list | tuple))


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(text(v) for v in value[:64]) if isinstance(value, list | tuple) else ()


def _mib(budget: ReadBudget) -> str:
    return f"{budget.max_file_bytes // MIB} MiB"



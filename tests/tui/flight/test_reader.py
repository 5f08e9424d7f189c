"""Reading dumps: both formats, the versions' differences, the budget, the cache."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.hang.flight import BY_RETIRED, Frontier
from ranktop.tui.flight import reader
from ranktop.tui.flight.reader import ReadBudget, parse_dump, read_dumps, reduce_dump
from ranktop.tui.flight.unpickle import DumpError
from ranktop.tui.simulator.flight_writer import dump_document, write_dump

from tests.tui.properties import FEW

SEQ = 42  # a hung all-reduce: 4 x step + 2


def write(folder: Path, rank: int, doc: dict, form: str = "pickle",
          mtime: float | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"comm_lib_trace_rank_{rank}"
    write_dump(path, doc, form, mtime)
    return path


@pytest.mark.parametrize("form", ["pickle", "json"])
def test_both_formats_give_the_same_frontier_and_entries(tmp_path: Path, form: str) -> None:
    write(tmp_path, 0, dump_document(0, 2, SEQ, entries=6, form=form), form)
    dump = read_dumps(str(tmp_path), 2).dumps[0]
    assert dump.version == "2.10"
    assert dump.groups["0"].ranks == (0, 1) and dump.groups["0"].desc == "default_pg"
    front = dump.frontier("0")
    assert (front.enqueued, front.started, front.completed) == (SEQ, SEQ, SEQ - 1)
    pending = dump.stopped_at()
    assert (pending.seq, pending.op, pending.state) == (SEQ, "nccl:all_reduce", "started")
    assert pending.input_dtypes == ("Float",)
    # Only the pickled dump has stack frames; the call site skips PyTorch's own.
    expected = "/workspace/llama/train.py:143 in sync_gradients" if form == "pickle" else ""
    assert pending.call_site == expected


def test_older_versions_field_names_and_shapes(tmp_path: Path) -> None:
    doc = dump_document(0, 4, SEQ, entries=3)
    doc["version"] = "2.2"
    doc["pg_config"] = {"0": [0, 1, 2, 3]}  # ranks given directly
    del doc["pg_status"]  # no frontier: the entries say it
    for entry in doc["entries"]:
        entry["seq_id"] = entry.pop("collective_seq_id")
        del entry["input_dtypes"], entry["output_dtypes"], entry["state"]
    doc["entries"][-1]["time_discovered_started_ns"] = 5
    write(tmp_path, 0, doc)
    dump = read_dumps(str(tmp_path), 4).dumps[0]
    assert dump.groups["0"].ranks == (0, 1, 2, 3)
    front = dump.frontier("0")
    assert (front.enqueued, front.completed) == (SEQ, SEQ - 1)
    assert dump.stopped_at().state == "started"
    assert dump.stopped_at().input_dtypes == ()


def test_unreadable_files_are_one_line_each_and_others_still_read(tmp_path: Path) -> None:
    write(tmp_path, 0, dump_document(0, 4, SEQ))
    (tmp_path / "comm_lib_trace_rank_1").write_bytes(b"\x80\x02}q\x00(X")  # cut short
    (tmp_path / "comm_lib_trace_rank_2").write_text('{"entries": 5}')
    (tmp_path / "comm_lib_trace_rank_3").write_bytes(
        pickle.dumps({"version": "2.10", "entries": [os.system]}))
    found = read_dumps(str(tmp_path), 5)
    assert list(found.dumps) == [0]
    assert set(found.errors) == {1, 2, 3} and found.absent == [4]
    assert "not a readable pickle" in found.errors[1]
    assert "'entries' is not a list" in found.errors[2]
    assert "posix.system" in found.errors[3] or "os.system" in found.errors[3]
    assert all("\n" not in why for why in found.errors.values())


def test_the_budget_bounds_file_size_total_and_entries(tmp_path: Path) -> None:
    for rank in range(3):
        write(tmp_path, rank, dump_document(rank, 3, SEQ, entries=30))
    size = (tmp_path / "comm_lib_trace_rank_0").stat().st_size
    small = ReadBudget(max_file_bytes=size - 1)
    assert "limit" in read_dumps(str(tmp_path), 3, small).errors[0]
    total = ReadBudget(max_total_bytes=2 * size)
    found = read_dumps(str(tmp_path), 3, total)
    assert sorted(found.dumps) == [0, 1] and "budget" in found.errors[2]
    assert any("budget" in note for note in found.notes)
    few = ReadBudget(max_entries=5, kept_per_group=1)
    dump = read_dumps(str(tmp_path), 3, few).dumps[0]
    assert dump.total_entries == 30
    assert [e.seq for e in dump.entries] == [SEQ - 2, SEQ - 1, SEQ]  # two done, one pending
    assert any("newest 5 entries" in n for n in read_dumps(str(tmp_path), 3, few).notes)


def test_a_file_is_parsed_again_only_when_it_changes(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, 0, dump_document(0, 1, SEQ), mtime=1000.0)
    calls = []
    real = reader.DumpParser.read
    monkeypatch.setattr(reader.DumpParser, "read", lambda *a: calls.append(a) or real(*a))
    cache: dict = {}
    for _ in range(3):
        read_dumps(str(tmp_path), 1, cache=cache)
    assert len(calls) == 1
    write(tmp_path, 0, dump_document(0, 1, SEQ + 4), mtime=2000.0)
    assert read_dumps(str(tmp_path), 1, cache=cache).dumps[0].frontier("0").enqueued == SEQ + 4
    assert len(calls) == 2 and len(cache) == 1 and path.exists()


def test_dumps_older_than_the_stall_are_left_out(tmp_path: Path) -> None:
    write(tmp_path, 0, dump_document(0, 2, SEQ), mtime=1000.0)
    write(tmp_path, 1, dump_document(1, 2, SEQ), mtime=3000.0)
    found = read_dumps(str(tmp_path), 2, since=2000.0)
    assert list(found.dumps) == [1] and found.absent == [0]
    assert any("older than the hang" in note for note in found.notes)


def test_strings_from_a_dump_are_made_safe_and_short(tmp_path: Path) -> None:
    doc = dump_document(0, 1, SEQ, entries=1)
    doc["entries"][0]["profiling_name"] = "nccl:all_reduce\x1b[2J\u202e" + "x" * 5000
    doc["pg_config"]["0"]["desc"] = "[bold red]pwn[/]\r\n"
    write(tmp_path, 0, doc)
    dump = read_dumps(str(tmp_path), 1).dumps[0]
    op = dump.entries[0].op
    assert "\x1b" not in op and "\u202e" not in op and len(op) < 300
    assert dump.groups["0"].desc.startswith("[bold red]pwn[/]")
    assert "\n" not in dump.groups["0"].desc


def test_json_dump_tolerates_empty_entries_key_absent(tmp_path: Path) -> None:
    doc = dump_document(0, 2, SEQ, form="json")
    del doc["entries"]  # PyTorch leaves the key out when the buffer is empty
    (tmp_path / "comm_lib_trace_rank_0").write_text(json.dumps(doc))
    dump = read_dumps(str(tmp_path), 2).dumps[0]
    assert dump.entries == () and dump.frontier("0").enqueued is None


# --- properties: whatever the bytes or the structure, only DumpError escapes --------------

JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(),
              st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)
KEYS = ["version", "pg_config", "pg_status", "entries", "name", "desc", "ranks",
        "process_group", "collective_seq_id", "seq_id", "profiling_name", "state",
        "input_sizes", "input_dtypes", "frames", "filename", "line", "pg_id", "is_p2p",
        "last_enqueued_collective", "last_completed_collective", "record_id"]


def _mutate(doc: object, data: st.DataObject) -> object:
    if isinstance(doc, dict):
        out = {k: _mutate(v, data) for k, v in doc.items()}
        if data.draw(st.booleans()):
            out[data.draw(st.sampled_from(KEYS))] = data.draw(JSONISH)
        return out
    if isinstance(doc, list):
        return [_mutate(v, data) for v in doc]
    return doc


@FEW
@given(st.data())
def test_any_structure_reduces_or_raises_dump_error(data: st.DataObject) -> None:
    doc = _mutate(copy.deepcopy(dump_document(0, 2, SEQ, entries=2)), data)
    try:
        dump = reduce_dump(doc, 0, "x")
    except DumpError:
        return
    dump.stopped_at()
    for group in dump.groups:
        dump.frontier(group)


@FEW
@given(st.binary(max_size=200))
def test_any_bytes_parse_or_raise_dump_error(data: bytes) -> None:
    try:
        parse_dump(data)
    except DumpError as error:
        assert "\n" not in str(error)


@FEW
@given(JSONISH)
def test_any_json_value_parses_or_raises_dump_error(value: object) -> None:
    try:
        text = json.dumps(value)
    except ValueError:
        return
    with contextlib.suppress(DumpError):
        parse_dump(text.encode())


def test_a_slow_read_does_not_hold_up_the_caller(tmp_path: Path, monkeypatch) -> None:
    import threading

    from ranktop.tui.flight import watch

    write(tmp_path, 0, dump_document(0, 1, SEQ))
    gate = threading.Event()
    real = watch.read_dumps

    def slow(*args, **kwargs):
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(watch, "read_dumps", slow)
    dumps = watch.FlightDumps(str(tmp_path), wait_seconds=0.01)
    assert dumps.verdict(1) is None  # still reading: the caller goes on
    gate.set()
    dumps._reading.join(10)
    assert dumps.verdict(1).kind == "all_stuck"  # the finished read's verdict
    assert dumps.verdict(1, since=1e12) is None  # another hang's question: not that answer


def test_every_dump_shares_one_copy_of_each_group(tmp_path: Path) -> None:
    """Each rank's dump lists every rank of the default group: at 100,000 ranks, 3.6 MB a
    dump if each kept its own."""
    for rank in range(4):
        write(tmp_path, rank, dump_document(rank, 4, SEQ, entries=3))
    dumps = read_dumps(str(tmp_path), 4).dumps
    groups = {id(dump.groups["0"].ranks) for dump in dumps.values()}
    assert len(dumps) == 4 and len(groups) == 1
    assert dumps[3].groups["0"].ranks == (0, 1, 2, 3)


# --- dumps as PyTorch 2.14.1 wrote them (gloo, 4 ranks, rank 2 frozen or killed) ----------

REAL = Path(__file__).parent / "real_2_14"


def test_a_real_gloo_dump_says_completion_by_retired_and_stops_at_the_newest() -> None:
    found = read_dumps(str(REAL / "frozen" / "fr_"), 4)
    assert sorted(found.dumps) == [0, 1, 3] and found.absent == [2]
    dump = found.dumps[0]
    assert dump.version == "2.10" and dump.completion == BY_RETIRED
    # pg_config is keyed '' while the entries name the group ('0', 'default_pg').
    assert list(dump.groups) == ["0"]
    assert dump.groups["0"].ranks == (0, 1, 2, 3) and dump.groups["0"].desc == "default_pg"
    front = dump.frontier("0")
    assert (front.enqueued, front.started, front.completed) == (282, None, 282)  # -1: unknown
    stopped = dump.stopped_at()
    assert (stopped.seq, stopped.op) == (282, "gloo:all_reduce")  # not the buffer's first
    assert stopped.call_site == "/workspace/train.py:23 in train_step"


def test_the_json_variant_of_a_real_dump_reads_as_its_pickle() -> None:
    as_json = read_dumps(str(REAL / "killed" / "fr_{rank}.json"), 4).dumps[1]
    as_pickle = read_dumps(str(REAL / "killed" / "fr_"), 4).dumps[1]
    assert as_json.groups == as_pickle.groups
    assert as_json.frontier("0") == as_pickle.frontier("0") == Frontier(282, None, 282)
    assert as_json.stopped_at().seq == as_pickle.stopped_at().seq == 282
    assert as_json.completion == BY_RETIRED


def test_a_real_gloo_dump_written_before_the_timeout_was_retired_waits_in_it() -> None:
    dump = read_dumps(str(REAL / "frozen_race" / "fr_"), 4).dumps[0]
    assert dump.frontier("0") == Frontier(282, None, 281)
    stopped = dump.stopped_at()
    assert (stopped.seq, stopped.state) == (282, "scheduled")


class HostileParser:
    """Parses in this process, at once, except the files that say HOSTILE: those take all
    the time they are given, on ``clock``."""

    clock = None  # set by the test

    def __init__(self, budget: ReadBudget) -> None:
        self.budget = budget

    def __enter__(self) -> HostileParser:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def read(self, path: Path, rank: int, mtime: float, seconds: float | None = None):
        if path.read_bytes() == b"HOSTILE":
            HostileParser.clock.now += self.budget.parse_seconds if seconds is None else seconds
            return None
        return reader.read_one(path, rank, self.budget, mtime)


def test_hostile_dumps_cost_one_budget_and_the_readable_ones_are_judged_first(
        tmp_path: Path, monkeypatch) -> None:
    for rank in range(8):  # the hostile dumps come first, by rank
        (tmp_path / f"comm_lib_trace_rank_{rank}").write_bytes(b"HOSTILE")
    for rank in range(8, 12):
        write(tmp_path, rank, dump_document(rank, 12, SEQ))
    clock = HostileParser.clock = FakeSeconds()
    monkeypatch.setattr(reader, "DumpParser", HostileParser)
    readable: list[tuple[float, list[int]]] = []
    found = read_dumps(str(tmp_path), 12, clock=clock,
                       readable=lambda early: readable.append((clock.now, sorted(early.dumps))))
    assert readable == [(8.0, [8, 9, 10, 11])]  # after a second's try of each hostile one
    assert clock.now <= reader.BUDGET.total_seconds  # was 8 x 20 s, one after another
    assert sorted(found.dumps) == [8, 9, 10, 11] and sorted(found.errors) == list(range(8))
    assert "stopped parsing dumps after 30 s lost to slow ones" in found.notes


class FakeSeconds:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

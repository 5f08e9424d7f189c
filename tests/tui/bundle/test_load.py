"""A bundle's console is checked before anything trusts it: every text neutralised as the
live labels are, every value within what a bundle can hold, and anything else refused in
one line (``NotABundle``), never an exception of another kind, never slowly."""

from __future__ import annotations

import contextlib
import math
import time

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranktop.tui.bundle.load import loaded
from ranktop.tui.bundle.saved import NotABundle, Saved
from ranktop.tui.core.text import plain

from tests.tui.bundle.hostile import HOSTILE, MARKUP

# Reading a broken or mutated bundle costs at most this many times reading the bundle as
# written (the fastest of a few tries of each, in one run: the machine's speed cancels out).
# Measured at 0.0-0.8 times; a check that walked a million-deep nesting value by value, or
# decoded before refusing, would cost far more.
AT_MOST_TIMES = 5.0
TRIES = 3


def fastest(read) -> float:
    """The fewest seconds ``read()`` took in TRIES tries (whatever it raised)."""
    took = []
    for _ in range(TRIES):
        started = time.perf_counter()
        with contextlib.suppress(NotABundle):
            read()
        took.append(time.perf_counter() - started)
    return min(took)


@pytest.fixture(scope="module")
def console(written) -> bytes:
    return (written / "console.msgpack").read_bytes()


@pytest.fixture(scope="module")
def raw(console) -> dict:
    return msgspec.msgpack.decode(console)


@pytest.fixture(scope="module")
def reading(console) -> float:
    """Seconds to read the bundle as written."""
    return fastest(lambda: loaded(console))


def texts(value: object):
    """Every text in ``value``, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, each in value.items():
            yield from texts(key)
            yield from texts(each)
    elif isinstance(value, (list, tuple)):
        for each in value:
            yield from texts(each)


def test_every_text_of_a_hostile_bundle_reaches_the_screens_neutralised(hostile_bundle):
    saved = loaded((hostile_bundle / "console.msgpack").read_bytes())
    found = list(texts(msgspec.to_builtins(saved, enc_hook=lambda v: v.tolist())))
    assert sum(MARKUP in text for text in found) > 100  # the corpus is in every free text
    unsafe = [text for text in found if not text.isprintable()]
    assert not unsafe, unsafe[0]
    host = saved.snapshot.analysis.rank_map.ranks[0].host
    assert host.startswith("gpu-node-000\ufffd[2J\ufffd[H\ufffd]52;c;")  # shown, inert
    assert host.endswith(MARKUP)  # markup is text: the screens escape it
    assert saved.ranks[7].alerts[0][0].endswith(MARKUP)


def test_a_bundle_as_written_reads_back_untouched(console, raw):
    saved = loaded(console)
    assert saved.job == raw["job"] == "llama-70b-pretrain"
    assert saved.snapshot.analysis.hang is not None and saved.selected == 7
    assert not any(HOSTILE in text for text in texts(raw))


def path_set(raw: dict, path: tuple, value: object) -> bytes:
    """``raw`` encoded with the value at ``path`` (keys and indexes) replaced."""
    copy = msgspec.msgpack.decode(msgspec.msgpack.encode(raw))
    inner = copy
    for step in path[:-1]:
        inner = inner[step]
    inner[path[-1]] = value
    return msgspec.msgpack.encode(copy)


ANALYSIS = ("snapshot", "analysis")
BROKEN = {
    "a moment of NaN": (("snapshot", "at"), math.nan),
    "a frame's time of +inf": ((*ANALYSIS, "frame", "time"), math.inf),
    "a frame's time of 1e300": ((*ANALYSIS, "frame", "time"), 1e300),
    "a frame's time of -10**12": ((*ANALYSIS, "frame", "time"), -1e12),
    "an anomaly since 0": ((*ANALYSIS, "anomalies", 0, "since"), 0.0),
    "an anomaly's data missing since 1e300": ((*ANALYSIS, "anomalies", 0, "unseen_since"),
                                              1e300),
    "a rank not answered past the job": ((*ANALYSIS, "frame", "unknown"), [10**6]),
    "gpus_per_node 0": ((*ANALYSIS, "rank_map", "gpus_per_node"), 0),
    "a rank past the job": ((*ANALYSIS, "anomalies", 0, "rank"), 10**6),
    "a negative rank": ((*ANALYSIS, "hang", "dead"), [-1]),
    "a rank map out of order": ((*ANALYSIS, "rank_map", "ranks", 3, "rank"), 4),
    "a node past the hosts": ((*ANALYSIS, "rank_map", "ranks", 3, "node"), 99),
    "up of another length": ((*ANALYSIS, "up"), [True] * 5),
    "a severity of no kind": ((*ANALYSIS, "anomalies", 0, "severity"), "[/]"),
    "a count below zero": ((*ANALYSIS, "hang", "ranks_read"), -1),
    "an integer past 2**53": ((*ANALYSIS, "progress", "step"), 2.0**64),
    "a selected rank past the job": (("selected",), 32),
    "a saved rank under another's number": (("ranks", 7, "rank"), 0),
    "nesting 10**6 deep in the job's name": (("job",), "deep"),
    "nesting 10**6 deep under a key of no one's": (("unknown",), "deep"),
    "a history in the analysis": ((*ANALYSIS, "history"), {"times": []}),
    "a text where a number goes": ((*ANALYSIS, "frame", "time"), "[/]"),
    "a frame series longer than the job": (("values", "temperature"), bytes(4 * 33)),
}


def deep(data: bytes) -> bytes:
    """``data`` with the string "deep" made 10**6 nested arrays."""
    return data.replace(b"\xa4deep", b"\x91" * 10**6 + b"\xc0", 1)


@pytest.mark.parametrize("case", BROKEN)
def test_a_value_no_bundle_holds_is_refused_in_one_line(raw, reading, case):
    path, value = BROKEN[case]
    if path == ("ranks", 7, "rank"):
        path = ("ranks", next(k for k in raw["ranks"] if int(k) == 7), "rank")
    data = path_set(raw, path, value)
    if value == "deep":
        data = deep(data)
    with pytest.raises(NotABundle) as refused:
        loaded(data)
    said = str(refused.value)
    assert fastest(lambda: loaded(data)) < AT_MOST_TIMES * reading
    assert "\n" not in said and len(said) < 400, said
    assert said.startswith("its console.msgpack "), said


def test_the_refusal_names_the_value_and_what_it_should_be(raw):
    data = path_set(raw, (*ANALYSIS, "frame", "time"), math.inf)
    with pytest.raises(NotABundle, match=r"snapshot\.analysis\.frame\.time is inf: a time "
                                         r"must be between 2000-01-01 and 2100-01-01"):
        loaded(data)
    data = path_set(raw, (*ANALYSIS, "anomalies", 1, "rank"), 40)
    with pytest.raises(NotABundle, match=r"anomalies\[1\]\.rank names rank 40: the job has "
                                         "32 ranks"):
        loaded(data)


def paths(value: object, path: tuple = ()):
    """Every place in ``value`` a mutation can go, sampled down in long lists."""
    yield path
    if isinstance(value, dict):
        for key, each in value.items():
            yield from paths(each, (*path, key))
    elif isinstance(value, list) and value:
        for index in sorted({0, len(value) // 2, len(value) - 1}):
            yield from paths(value[index], (*path, index))


ODD_VALUES = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e12, 0, -1, 2**63, 2**64 - 1,
                     -(2**63), 0.0, 1.5, True, None, "", HOSTILE, "x" * 70_000, [], {}, [[]],
                     [None], {"": None}, [0] * 40, b"\x00\x01", [math.nan] * 3]),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.lists(st.integers(-3, 40), max_size=8),
)


@settings(max_examples=50, deadline=None, database=None, derandomize=True)
@given(data=st.data())
def test_a_mutated_bundle_is_read_or_refused_in_one_line_never_an_error(raw, reading, data):
    places = [p for p in paths(raw) if p]
    mutations = data.draw(st.lists(st.tuples(st.sampled_from(places), ODD_VALUES),
                                   min_size=1, max_size=3))
    copy = raw
    for path, value in mutations:
        try:
            copy = msgspec.msgpack.decode(path_set(copy, path, value))
        except (KeyError, IndexError, TypeError):  # an earlier mutation moved the place
            continue
    mutated = msgspec.msgpack.encode(copy)
    started = time.perf_counter()
    try:
        saved = loaded(mutated)
    except NotABundle as refused:
        assert "\n" not in str(refused)
    else:
        assert isinstance(saved, Saved)
        # no control, line break, bidi override or surrogate: what a terminal could take as
        # a command (a code point no Unicode version assigns yet is shown, as live labels)
        assert all(plain(text, len(text)) == text for text in texts(
            msgspec.to_builtins(saved, enc_hook=lambda v: v.tolist())))
    if time.perf_counter() - started >= AT_MOST_TIMES * reading:  # or the machine was busy
        assert fastest(lambda: loaded(mutated)) < AT_MOST_TIMES * reading

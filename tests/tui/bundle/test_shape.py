"""A console's shape is bounded before it is decoded: its nesting, each list's length and
all values together, each refused from its header, before anything is built."""

from __future__ import annotations

import msgspec
import pytest
from ranktop.tui.bundle.shape import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_TOTAL_ITEMS,
    ShapeError,
    check_shape,
)


def test_what_ranktop_writes_passes_whatever_it_holds():
    value = {"a": [1, -1, 2**40, -(2**40), 1.5, None, True, False, "x" * 300, b"\x00" * 70_000],
             "b": {"c": [[[]]], 3: {}}, "d": list(range(MAX_ITEMS))}
    check_shape(msgspec.msgpack.encode(value))


def test_nesting_past_the_bound_is_refused_even_a_million_deep():
    check_shape(b"\x91" * (MAX_DEPTH - 1) + b"\xc0")
    for data in (b"\x91" * 10**6 + b"\xc0", b"\x81\xa1k" * 10**6 + b"\xc0"):
        with pytest.raises(ShapeError, match=f"nested over {MAX_DEPTH} deep"):
            check_shape(data)
    # refused at the first level past the bound: what follows it is never read
    with pytest.raises(ShapeError, match=f"nested over {MAX_DEPTH} deep"):
        check_shape(b"\x91" * (MAX_DEPTH + 1))


def test_a_list_announced_longer_than_a_job_is_refused_from_its_header():
    """500,000,000 booleans announced: refused before one is read (none follows here)."""
    with pytest.raises(ShapeError, match="a list of 500,000,000 items"):
        check_shape(b"\xdd" + (500_000_000).to_bytes(4, "big"))
    with pytest.raises(ShapeError, match="a list of 300,000 items"):
        check_shape(b"\xdf" + (300_000).to_bytes(4, "big"))


def test_values_past_the_total_are_refused_before_the_rest_is_read():
    # The cheapest values, the most of them: lists of 127 zeros, each a 3-byte header
    # (array 16) and a byte a zero, in one list of them (its header 3 bytes too). The
    # total passes on opening list `past`: a message cut right after that list's header
    # is refused for its total, not for breaking off, so nothing after it was read.
    lists = MAX_TOTAL_ITEMS // 127 + 1
    data = msgspec.msgpack.encode([[0] * 127] * lists)
    assert len(data) == 3 + lists * 130
    with pytest.raises(ShapeError, match="values in all"):
        check_shape(data)
    past = -(-(MAX_TOTAL_ITEMS - lists + 1) // 127)  # the first k with lists + 127 k > max
    with pytest.raises(ShapeError, match="values in all"):
        check_shape(data[:3 + (past - 1) * 130 + 3])
    with pytest.raises(ShapeError, match="it breaks off"):  # one list short of passing it
        check_shape(data[:3 + (past - 2) * 130 + 3])


@pytest.mark.parametrize("data, said", [
    (b"", "it breaks off"),
    (b"\x92\x01", "it breaks off"),
    (b"\xdb\x00\x00\xff\xffabc", "it breaks off"),
    (b"\x01\x02", "bytes follow its end"),
    (b"\xc7\x01\x05x", "a value of a kind no bundle holds"),
    (b"\xc1", "a value of a kind no bundle holds"),
])
def test_a_message_that_breaks_off_or_runs_on_is_refused(data, said):
    with pytest.raises(ShapeError, match=said):
        check_shape(data)

"""Prometheus's instant-query answers decoded fast when they are plain.

At 16,384 ranks a poll is megabytes of JSON; decoding it holds the GIL (the UI thread waits)
and is much of a poll's CPU. An answer whose bytes are all printable ASCII with no escape in
them, and whose every label name and value is short, is decoded straight into typed records
by msgspec, in one pass that checks its shape as it goes: its labels are plain without
looking at them again. Anything else (a label with a quote, a non-ASCII host name, a value
past the length limit, an error, another shape) is left to the client's general path, which
reads any JSON and makes every label plain (prom_client).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

LABEL_NAME_CHARS = 128
LABEL_VALUE_CHARS = 256

_Name = Annotated[str, msgspec.Meta(max_length=LABEL_NAME_CHARS)]
_Value = Annotated[str, msgspec.Meta(max_length=LABEL_VALUE_CHARS)]


class Record(msgspec.Struct, gc=False):
    """One sample of an instant vector: its labels, and (time, value as Prometheus writes
    it: "1.5", "NaN", "+Inf")."""

    metric: dict[_Name, _Value]
    value: tuple[float, str]


class _Data(msgspec.Struct):
    resultType: str  # Prometheus spells it so
    result: list[Record]


class _Answer(msgspec.Struct):
    status: str
    data: _Data
    warnings: list[str] = []


_DECODER = msgspec.json.Decoder(_Answer)


def instant_vector(body: bytes) -> tuple[list[Record], list[str]] | None:
    """The samples and the warnings of a successful instant vector of plain ASCII, or None:
    read it the general way."""
    if not body.isascii() or b"\\" in body or b"\x7f" in body:
        return None  # JSON holds no raw control character: this leaves only printable text
    try:
        answer = _DECODER.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if answer.status != "success" or answer.data.resultType != "vector":
        return None
    return answer.data.result, answer.warnings

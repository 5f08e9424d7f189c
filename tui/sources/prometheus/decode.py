"""Prometheus's answers decoded: fast when they are plain, and never holding a long label.

At 16,384 ranks a poll is megabytes of JSON; decoding it holds the GIL (the UI thread waits)
and is much of a poll's CPU. An answer whose bytes are all printable ASCII with no escape in
them, and whose every label name and value is short, is decoded straight into typed records
by msgspec, in one pass that checks its shape as it goes: its labels are plain without
looking at them again. Anything else (a label with a quote, a non-ASCII host name, a value
past the length limit, an error, another shape) is read by ``answer``, which reads any JSON
and, in a vector or a matrix, cuts each label value to its limit as it is decoded: a label
value of a megabyte stays bytes of the body, and only its first characters ever become a
string (decoded whole, a few hundred such values left the process's memory high for good).
Its labels come out plain (``core.text.plain``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Annotated, Any, NamedTuple

import msgspec

from ...core.text import plain

LABEL_NAME_CHARS = 128
# A label value is whole up to this length: it is what names a host or a pod, and what a
# rank's queries send back (a DNS or Kubernetes name is at most 253). Longer ones are cut
# while decoding, with a digest of the whole value, so that two values cut alike stay two.
LABEL_VALUE_CHARS = 1024

_Name = Annotated[str, msgspec.Meta(max_length=LABEL_NAME_CHARS)]
_Value = Annotated[str, msgspec.Meta(max_length=LABEL_VALUE_CHARS)]


class Record(msgspec.Struct, gc=False):
    """One sample of an instant vector: its labels, and (time, value as Prometheus writes
    it: "1.5", "NaN", "+Inf")."""

    metric: dict[_Name, _Value]
    value: tuple[float, str]


class HeldRecord(msgspec.Struct, gc=False):
    """One sample of a range ranktop holds (past): a Record's shape, its value read already."""

    metric: Mapping[str, str]
    value: tuple[float, float]


RECORDS = (Record, HeldRecord)  # what a Vector reads by attribute, not as JSON


class _Data(msgspec.Struct):
    resultType: str  # Prometheus spells it so
    result: list[Record]


class _Answer(msgspec.Struct):
    status: str
    data: _Data
    warnings: list[str] = []  # Prometheus, Thanos: a store or a remote read failed
    infos: list[str] = []  # Prometheus 3: notes on the query, the data is whole
    isPartial: bool = False  # VictoriaMetrics cluster: a storage node did not answer


_DECODER = msgspec.json.Decoder(_Answer)


class Notes(NamedTuple):
    """What a backend says beside its answer. ``partial``: why the answer may lack series
    (a store, a shard or a storage node did not answer), a few reasons, each short; empty
    when the answer is whole. ``infos``: notes that leave the data whole (Prometheus 3's
    "metric might not be a counter"), shown only."""

    partial: tuple[str, ...] = ()
    infos: tuple[str, ...] = ()

    @classmethod
    def of(cls, warnings: object, infos: object, is_partial: object) -> Notes:
        """The notes of an answer's ``warnings``, ``infos`` and ``isPartial`` fields, as
        they came (any JSON value)."""
        partial = _texts(warnings)
        if is_partial is True and not partial:
            partial = (PARTIAL_FLAG,)
        return cls(partial, _texts(infos))


MAX_NOTES = 3  # of each kind, the first ones: they are shown
NOTE_CHARS = 600  # Thanos says why at the end of a long line: kept whole for short_reason
# VictoriaMetrics cluster says no more than this: which storage node failed is in its log.
PARTIAL_FLAG = "the backend flags its answer partial (isPartial): a storage node did not answer"


def _texts(found: object) -> tuple[str, ...]:
    """A few short plain texts from a list of anything (they are shown, and from outside)."""
    if not isinstance(found, list):
        return ()
    return tuple(plain(str(text), NOTE_CHARS) for text in found[:MAX_NOTES])


class RangeRecord(msgspec.Struct, gc=False):
    """One series of a range answer: its labels, and its (time, value) points, the values
    read as numbers ("NaN" and "-Inf" included; "+Inf" sends the answer the general way)."""

    metric: dict[_Name, _Value]
    values: list[tuple[float, float]]


class _RangeData(msgspec.Struct):
    resultType: str
    result: list[RangeRecord]


class _RangeAnswer(msgspec.Struct):
    status: str
    data: _RangeData
    warnings: list[str] = []
    infos: list[str] = []
    isPartial: bool = False


# strict=False reads a value written as a string ("61.5") as the number it is
_RANGE_DECODER = msgspec.json.Decoder(_RangeAnswer, strict=False)


def _printable(body: bytes) -> bool:
    """Whether every byte of ``body`` is printable ASCII with no escape: JSON holds no raw
    control character, so only printable text is left."""
    return body.isascii() and b"\\" not in body and b"\x7f" not in body


def range_matrix(body: bytes) -> list[RangeRecord] | None:
    """The series of a successful range answer of plain ASCII, or None: read it the
    general way."""
    if not _printable(body):
        return None
    try:
        answer = _RANGE_DECODER.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if answer.status != "success" or answer.data.resultType != "matrix":
        return None
    if answer.warnings or answer.isPartial:  # rare: read the general way, notes and all
        return None
    return answer.data.result


def instant_vector(body: bytes) -> tuple[list[Record], Notes] | None:
    """The samples and the backend's notes of a successful instant vector of plain ASCII,
    or None: read it the general way."""
    if not _printable(body):
        return None
    try:
        answer = _DECODER.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if answer.status != "success" or answer.data.resultType != "vector":
        return None
    return answer.data.result, Notes.of(answer.warnings, answer.infos, answer.isPartial)


class _LooseSeries(msgspec.Struct):
    metric: msgspec.Raw  # decoded on its own: whole when short, else value by value
    value: Any = None  # [time, "value"] in a vector
    values: Any = None  # [[time, "value"], ...] in a matrix


class _LooseData(msgspec.Struct):
    resultType: str
    result: list[_LooseSeries]


class _LooseAnswer(msgspec.Struct):
    status: str
    data: _LooseData
    warnings: Any = None
    infos: Any = None
    isPartial: Any = None


_LOOSE = msgspec.json.Decoder(_LooseAnswer)
_ANY = msgspec.json.Decoder()
_RAW_VALUES = msgspec.json.Decoder(dict[str, msgspec.Raw])
# Enough bytes for LABEL_VALUE_CHARS characters however they are written (an escaped
# surrogate pair is 12 bytes a character), and the quotes.
_WHOLE_BYTES = LABEL_VALUE_CHARS * 12 + 2
_NOTE_CHARS = 60  # "… [N more characters, #digest]" after a cut value
MAX_ORIGINALS = 65_536
_MOST_PER_CHAR = 13  # a cut inside an escape or a UTF-8 character is undone within this
# msgspec refuses a lone surrogate escape (JSON allows one); it becomes U+FFFD, as plain
# would make it anyway.
_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
                             rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def answer(body: bytes, originals: dict[str, str] | None = None) -> object:
    """Any answer, as JSON reads it (ValueError if it is not JSON); in a vector or a matrix
    every label name and value is plain and at most its limit long, cut while decoding;
    ``originals`` gets each value that plain changed, by what it became."""
    originals = {} if originals is None else originals
    if b"\\ud" in body or b"\\uD" in body:
        body = _LONE_SURROGATE.sub(rb"\\ufffd", body)
    try:
        loose = _LOOSE.decode(body)
    except msgspec.ValidationError:  # another shape: an error, names, a scalar
        return _any_answer(body)
    result = [_series(series, originals) for series in loose.data.result]
    decoded = {"status": loose.status, "data": {"resultType": loose.data.resultType,
                                                 "result": result}}
    for name in ("warnings", "infos", "isPartial"):
        if getattr(loose, name) is not None:
            decoded[name] = getattr(loose, name)
    return decoded


def _any_answer(body: bytes) -> object:
    """An answer of any shape; the labels of any series in it made plain and short."""
    decoded = _ANY.decode(body)
    data = decoded.get("data") if isinstance(decoded, dict) else None
    if isinstance(data, dict) and isinstance(data.get("result"), list):
        for item in data["result"]:
            if isinstance(item, dict) and isinstance(item.get("metric"), dict):
                item["metric"] = plain_labels(item["metric"])
    return decoded


def plain_labels(labels: Mapping, max_chars: int = LABEL_VALUE_CHARS) -> dict[str, str]:
    """Label names and values from outside as plain, short text (any JSON value a string)."""
    return {plain(str(name), LABEL_NAME_CHARS):
            plain(value if isinstance(value, str) else str(value), max_chars)
            for name, value in labels.items()}


def _series(series: _LooseSeries, originals: dict[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = {"metric": _labels(series.metric, originals)}
    if series.value is not None:
        found["value"] = series.value
    if series.values is not None:
        found["values"] = series.values
    return found


def _labels(raw: msgspec.Raw, originals: dict[str, str]) -> dict[str, str]:
    """A series' labels, plain; a label set too short to hold a long value is decoded whole
    (and left as it is when it is plain already, as nearly every one is). A value that
    plain changed is kept as it came in ``originals``, under what it became."""
    if len(memoryview(raw)) > _WHOLE_BYTES:
        labels = {name: label_value(value) for name, value in _RAW_VALUES.decode(raw).items()}
    else:
        labels = _ANY.decode(raw)
        if not isinstance(labels, dict):
            raise ValueError("a series' labels are not an object")
    for name, value in labels.items():
        if not (isinstance(value, str) and len(value) <= LABEL_VALUE_CHARS
                and value.isprintable() and len(name) <= LABEL_NAME_CHARS
                and name.isprintable()):
            made = plain_labels(labels, LABEL_VALUE_CHARS + _NOTE_CHARS)
            _keep_originals(labels, made, originals)
            return made
    return labels


def _keep_originals(labels: dict, made: dict[str, str], originals: dict[str, str]) -> None:
    """Each short value that ``plain`` changed (a control character in it), by what it
    became: a query about it sends what came."""
    if len(originals) > MAX_ORIGINALS:
        originals.clear()
    for (_, value), shown in zip(labels.items(), made.values(), strict=True):
        if isinstance(value, str) and value != shown and len(value) <= LABEL_VALUE_CHARS:
            originals[shown] = value


def label_value(raw: msgspec.Raw, max_chars: int = LABEL_VALUE_CHARS) -> str:
    """A label's JSON value as plain text of at most ``max_chars`` characters and a note of
    how many more there were (counted on the bytes past the cut: close, not exact)."""
    view = memoryview(raw)
    if len(view) <= _WHOLE_BYTES:
        value = _ANY.decode(view)
        return plain(value if isinstance(value, str) else str(value), max_chars)
    head, used = _head(view)
    dropped = len(head) - max_chars + len(view) - used
    digest = hashlib.blake2b(view, digest_size=6).hexdigest()
    return f"{plain(head[:max_chars], max_chars)}… [{dropped} more characters, #{digest}]"


def _head(view: memoryview) -> tuple[str, int]:
    """The first characters of a long JSON value, and how many of its bytes they took."""
    if view[:1] == b'"':
        for end in range(_WHOLE_BYTES, _WHOLE_BYTES - _MOST_PER_CHAR, -1):
            try:
                return _ANY.decode(bytes(view[:end]) + b'"'), end + 1
            except ValueError:  # cut inside an escape or a character: a byte shorter
                continue
    return bytes(view[:_WHOLE_BYTES]).decode("utf-8", "replace"), _WHOLE_BYTES

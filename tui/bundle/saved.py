"""What a bundle holds for ``ranktop open`` to show the console again, offline: the snapshot
of the moment shown, and for the ranks that matter (each incident's, the hang's, the one
selected) their history, alerts, log excerpts and GPU model.

It is stored as typed MessagePack (``console.msgpack``) and read back against these types
only: a bundle from elsewhere can hold wrong values, never code."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import msgspec

from ..engine.snapshot import RankHistory, Snapshot

FORMAT = 1  # raised when what is stored changes so that an older ranktop cannot read it


@dataclass(frozen=True)
class SavedLine:
    """One line of a saved log excerpt, as the rank screen showed it."""

    text: str
    kind: str
    origin: str = ""


@dataclass(frozen=True)
class SavedLog:
    """The end of one of a rank's log files when the bundle was written."""

    name: str
    lines: tuple[SavedLine, ...]
    sizes: Mapping[str, int] = field(default_factory=dict)  # each file's size then: where
    # the excerpt ends in it (files read through the engine's process are not listed)
    status: str = ""


@dataclass(frozen=True)
class RankSaved:
    """What the rank screen shows of one rank besides the snapshot."""

    rank: int
    history: RankHistory
    alerts: tuple[tuple[str, ...], ...] = ()
    alerts_note: str = ""
    logs: tuple[SavedLog, ...] = ()
    logs_note: str = ""
    gpu_model: str = ""


@dataclass(frozen=True)
class Saved:
    """A bundle's console: what ``ranktop open`` shows."""

    job: str
    written: float  # when the bundle was written (epoch seconds)
    snapshot: Snapshot  # of the moment shown; its ``at`` is set when that was not live
    ranks: Mapping[int, RankSaved] = field(default_factory=dict)
    selected: int | None = None  # the rank the cursor was on
    format: int = FORMAT
    ranktop: str = ""  # the version that wrote it
    values: Mapping[str, bytes] = field(default_factory=dict)
    """Only as stored: the frame's values, as 32-bit little-endian floats (the precision the
    screen gets from an engine in its own process), half the bytes of the numbers."""

    @property
    def moment(self) -> float:
        return moment_of(self.snapshot, self.written)


def moment_of(snapshot: Snapshot, written: float) -> float:
    """A bundle's moment: the past moment's, else the live frame's (else when written)."""
    if snapshot.at is not None:
        return snapshot.at
    frame = snapshot.analysis.frame
    return frame.time if frame is not None else written


class NotABundle(Exception):
    """What was given cannot be read as a bundle; the message says why, in one line."""


def encoded(saved: Saved) -> bytes:
    return msgspec.msgpack.encode(_packed(saved), enc_hook=_plain)


def decoded(data: bytes) -> Saved:
    """The ``Saved`` in ``data``; NotABundle when it is not one this ranktop can read."""
    try:
        header = msgspec.msgpack.decode(data, type=_Header)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise NotABundle(f"its console.msgpack is not ranktop's ({error})") from None
    if header.format != FORMAT:
        raise NotABundle(f"it was written by ranktop {header.ranktop or '?'} in format "
                         f"{header.format}; this ranktop reads format {FORMAT}")
    try:
        return _unpacked(msgspec.msgpack.decode(data, type=Saved))
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise NotABundle(f"its console.msgpack is damaged ({error})") from None


def _packed(saved: Saved) -> Saved:
    frame = saved.snapshot.analysis.frame
    if frame is None or not frame.values:
        return saved
    values = {}
    for metric, numbers in frame.values.items():
        packed = array("f", numbers)
        if sys.byteorder == "big":
            packed.byteswap()
        values[metric] = packed.tobytes()
    return replace(saved, values=values, snapshot=_with_values(saved.snapshot, {}))


def _unpacked(saved: Saved) -> Saved:
    if saved.snapshot.analysis.frame is None or not saved.values:
        return saved
    values = {}
    for metric, data in saved.values.items():
        numbers = array("f")
        numbers.frombytes(data[: len(data) // 4 * 4])
        if sys.byteorder == "big":
            numbers.byteswap()
        values[metric] = numbers
    return replace(saved, values={}, snapshot=_with_values(saved.snapshot, values))


def _with_values(snapshot: Snapshot, values: Mapping) -> Snapshot:
    analysis = snapshot.analysis
    assert analysis.frame is not None
    frame = replace(analysis.frame, values=values)
    return replace(snapshot, analysis=replace(analysis, frame=frame))


def cleared(saved: Saved, clear: Callable[[str], str]) -> Saved:
    """``saved`` with ``clear`` applied to every text it holds, keys included."""
    plain = msgspec.to_builtins(saved, enc_hook=_plain)
    return msgspec.convert(_each_text(plain, clear), type=Saved, strict=False)


def _each_text(value: object, clear: Callable[[str], str]) -> object:
    if isinstance(value, str):
        return clear(value)
    if isinstance(value, dict):
        return {_each_text(k, clear): _each_text(v, clear) for k, v in value.items()}
    if isinstance(value, (list, tuple)):  # to_builtins leaves tuples as tuples
        return [_each_text(v, clear) for v in value]
    return value


class _Header(msgspec.Struct):
    format: int = 0
    ranktop: str = ""


def _plain(value: object) -> object:
    if isinstance(value, array):  # a frame's values, as packed for the UI
        return value.tolist()
    raise NotImplementedError(f"{type(value).__name__} cannot be saved in a bundle")

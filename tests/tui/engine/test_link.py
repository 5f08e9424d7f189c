"""The pipe to the engine, bounded: a request not answered in time says so, and no message
over the cap crosses, either way (tiny limits, never a long wait)."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from types import SimpleNamespace

import pytest
from ranktop.tui.engine import link
from ranktop.tui.engine.client import EngineRefused, EngineSilent, EngineStopped
from ranktop.tui.engine.link import Link, MessageTooBig, packed
from ranktop.tui.engine.protocol import GpuModel
from ranktop.tui.engine.serve import answer
from ranktop.tui.engine.wire import Sent


def ended() -> str:
    return "exit status 0"


def test_a_request_the_engine_never_answers_says_so_instead_of_waiting_for_ever():
    ours, engine = multiprocessing.Pipe()  # the engine reads, and never answers
    asked = Link(ours, ended, answer_seconds=0.01)
    try:
        with pytest.raises(EngineSilent, match=r"did not answer in 0.01 s \(GpuModel\)"):
            asked.answer(GpuModel(5))
        assert asked._pending == {}  # given up: a hung engine's requests do not pile up
        assert engine.recv() == (0, GpuModel(5))
        engine.send((0, True, "late"))  # an answer after the worker gave up is dropped
        later = asked.ask(GpuModel(6))
        assert engine.recv() == (1, GpuModel(6))
        engine.send((1, True, "H100"))
        assert later.result(timeout=60) == "H100"
    finally:
        asked.close()
        engine.close()


def test_a_request_over_the_cap_is_refused_in_one_line_and_never_sent(monkeypatch):
    monkeypatch.setattr(link, "MESSAGE_BYTES", 1000)
    ours, engine = multiprocessing.Pipe()
    asked = Link(ours, ended)
    try:
        future = asked.ask(GpuModel("x" * 5000))
        error = future.exception(timeout=0)
        assert isinstance(error, MessageTooBig) and isinstance(error, EngineRefused)
        assert "over the 1,000 bytes" in str(error) and "\n" not in str(error)
        assert not engine.poll()
    finally:
        asked.close()
        engine.close()


def test_packed_says_the_size_and_the_cap():
    with pytest.raises(MessageTooBig, match=r"a message of 2.0 MiB is over the 1.0 MiB"):
        packed(b"x" * 2**21, limit=2**20)
    assert len(packed("small", limit=100)) < 100


def engine_answering(gpu_model: str) -> SimpleNamespace:
    """Enough of a ``ThreadEngine`` for ``serve.answer``: its GPU model, no logs."""
    return SimpleNamespace(open_logs=lambda rank_map, rank: ([], ""),
                           gpu_model=lambda rank: gpu_model)


def serving(conn, engine: SimpleNamespace) -> threading.Thread:
    served = threading.Thread(target=asyncio.run, args=(answer(conn, engine, Sent()),),
                              daemon=True)
    served.start()
    return served


def test_an_answer_over_the_cap_crosses_as_one_line_that_says_so(monkeypatch):
    monkeypatch.setattr(link, "MESSAGE_BYTES", 1000)
    ours, theirs = multiprocessing.Pipe()
    served = serving(theirs, engine_answering("H100 " * 1000))
    asked = Link(ours, ended, answer_seconds=60)
    try:
        with pytest.raises(EngineRefused, match="the engine's answer was refused: a message"):
            asked.answer(GpuModel(5))
    finally:
        asked.close()
        served.join(60)
    assert not served.is_alive()  # hung up: the engine ended


def test_requests_in_flight_when_the_engine_goes_fail_with_engine_stopped():
    ours, engine = multiprocessing.Pipe()
    asked = Link(ours, ended, answer_seconds=60)
    future = asked.ask(GpuModel(5))
    engine.close()
    with pytest.raises(EngineStopped, match=r"the engine process stopped \(exit status 0\)"):
        future.result(timeout=60)
    asked.close()


class ClosedWhileReading:
    """A pipe end closed by the UI while its reader waits in it: the read then fails as
    multiprocessing's does once the handle is gone (a TypeError, not an OSError)."""

    def __init__(self) -> None:
        self.closed = threading.Event()

    def recv_bytes(self) -> bytes:
        self.closed.wait(60)
        raise TypeError("'NoneType' object cannot be interpreted as an integer")

    def fileno(self) -> int:
        raise OSError("handle is closed")

    def close(self) -> None:
        self.closed.set()


def test_closing_the_link_while_its_reader_waits_ends_the_reader_quietly(monkeypatch):
    failed: list = []
    monkeypatch.setattr(threading, "excepthook", failed.append)
    before = set(threading.enumerate())
    asked = Link(ClosedWhileReading(), ended)
    (reader,) = [t for t in set(threading.enumerate()) - before if t.name == "engine-answers"]
    asked.close()
    reader.join(60)
    assert not reader.is_alive() and failed == []
    assert asked.stopped == "the engine process stopped (closed)"

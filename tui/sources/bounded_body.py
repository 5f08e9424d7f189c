"""An answer's body read whole, before its deadline and within a budget of bytes.

The budget counts bytes after decompression: a 10 MB gzip body can inflate to 10 GiB. The
body is inflated here (gzip or deflate, the only encodings ranktop asks for), never more
than a megabyte at a time nor past what is left of the budget, so a bomb is stopped where
the budget ends, not where a chunk of it happens to end. A poll's answers share one
``ByteBudget``; a single answer may
also not pass ``max_bytes``. Nothing of a refused body outlives the refusal: what was read
is dropped before the error leaves.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Iterator

import httpx

ENCODINGS = "gzip, deflate"  # what the client asks for, as Accept-Encoding
PIECE_BYTES = 1 << 20  # the most inflated at once
_DROPPED_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


class BodyTooLarge(Exception):
    """The body, inflated, passed its bound or the budget it shares."""


class BodyTooSlow(Exception):
    """The body did not all come before the deadline."""


class BodyEncoding(Exception):
    """The body is compressed in a way ranktop did not ask for, or is corrupt."""


class ByteBudget:
    """Bytes that answers may still take, shared by the queries of one poll."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self._counting = threading.Lock()  # a poll's queries read their answers at once

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def take(self, count: int) -> None:
        """Count ``count`` bytes read; BodyTooLarge once they pass what was left."""
        with self._counting:
            self.left -= count
            left = self.left
        if left < 0:
            raise BodyTooLarge(f"answers past {self.limit // 1_000_000} MB")


def read_body(answer: httpx.Response, deadline: float, max_bytes: int, budget: ByteBudget
              ) -> httpx.Response:
    """The whole answer, inflated, as a response of its own; the stream is closed."""
    pieces: list[bytes] = []
    try:
        read = 0
        for piece in _inflated(answer, _decoder(answer.headers.get("content-encoding", ""))):
            read += len(piece)
            if read > max_bytes:
                raise BodyTooLarge(f"an answer past {max_bytes // 1_000_000} MB")
            budget.take(len(piece))
            pieces.append(piece)
            if time.monotonic() > deadline:
                raise BodyTooSlow()
        body = b"".join(pieces)
    finally:
        pieces.clear()  # a failure's traceback keeps this frame: let it keep nothing big
        answer.close()
    headers = [(k, v) for k, v in answer.headers.items() if k.lower() not in _DROPPED_HEADERS]
    return httpx.Response(answer.status_code, headers=headers, content=body,
                          request=answer.request)


def _decoder(encoding: str) -> zlib._Decompress | None:
    """What inflates a body of ``encoding``; None for a body sent as it is."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":  # zlib-wrapped, as HTTP says (a gzip header is read too)
        return zlib.decompressobj(32 + zlib.MAX_WBITS)
    raise BodyEncoding(f"compressed as {encoding[:20]!r}, which was not asked for")


def _inflated(answer: httpx.Response, decoder: zlib._Decompress | None) -> Iterator[bytes]:
    """The body's bytes as sent, inflated by ``decoder`` a piece at a time."""
    for chunk in answer.iter_raw():
        if decoder is None:
            yield chunk
            continue
        data = chunk
        while data:
            try:
                piece = decoder.decompress(data, PIECE_BYTES)
            except zlib.error:
                raise BodyEncoding("a corrupt compressed body") from None
            data = decoder.unconsumed_tail
            if piece:
                yield piece

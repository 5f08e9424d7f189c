"""Hypothesis settings and strategies shared by the property tests of parsers of outside data.

Examples are few (each test runs in well under a second) and no database is written: the
tests hunt for inputs that make a parser raise what it does not document, not for speed.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FEW = settings(max_examples=60, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow])

# Fragments of the lines ranktop reads, so that examples come near what the parsers match.
FRAGMENTS = [
    "[PG 0 Rank 3] ", "[PG ID 1 PG GUID 1 Rank 2] ", "[rank5]:", "0: ", "[default3]:",
    "Watchdog caught collective operation timeout: WorkNCCL(", "SeqNum=", ", OpType=ALLREDUCE",
    ", Timeout(ms)=", ")", " ran for ", " milliseconds before timing out.",
    "Timeout at NCCL work: ", ", last enqueued NCCL work: ", ", last completed NCCL work: ",
    "Received a dump signal", "NCCL INFO ", "NCCL WARN ", "NET/IB ", "Xid (PCI:0000:3b:00): ",
    "XID ", "terminate called after throwing", "what(): ", "RuntimeError: ", "Traceback (most "
    "recent call last)", "comm 0x55d8 rank ", " nranks ", " cudaDev ", "host-1:4242:4249 [",
    "] ", "\x1b[31m", "\x1b]8;;", "\r", "\t", "\u202e", "\x00", "\n", "E1122 03:04:05.1 x.cpp:1] ",
]
NUMBERS = st.one_of(st.integers(-5, 100_000).map(str), st.text("0123456789", min_size=19,
                                                                max_size=5000))
PIECES = st.one_of(st.sampled_from(FRAGMENTS), NUMBERS, st.text(max_size=20))
LINES = st.lists(PIECES, max_size=14).map("".join)
RAW_LINES = st.one_of(LINES.map(lambda s: s.encode("utf-8", "surrogatepass")),
                      st.binary(max_size=200))

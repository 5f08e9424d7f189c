"""What a rank's log lines say about a hang: PyTorch's watchdog reports, and how the log ends.

The watchdog lines, by vintage (any launcher prefix before them is ignored)::

    [E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout:
        WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800042 ...
    [rank3]:[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught ...
        WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, ...)
    [PG ID 0 PG GUID 0(default_pg) Rank 3] Timeout at NCCL work: 8812, last enqueued NCCL
        work: 8812, last completed NCCL work: 8811.
    [PG ID 2 PG GUID 3 Rank 3] Exception (either an error or timeout) detected by watchdog
        at work: 32, last enqueued NCCL work: 32, last completed NCCL work: 31.
    [PG ID 0 PG GUID 0(default_pg) Rank 4] Received a dump signal due to a collective
        timeout from rank 7 ... Last enqueued NCCL work: 56118, last completed NCCL work: 56118.

PyTorch <= 2.1 logs only the first kind, then takes the process down with
``terminate called after throwing ...`` and a ``what():`` line that repeats it.

The other backends' timeouts are reports too, with no SeqNum: gloo's, raised while a rank
waits on a peer and repeated in its traceback with PyTorch's ``[rankN]: `` prefix (the
number is the timeout), and the new NCCL backend's, ``nccl2`` (shipped in PyTorch 2.14, the
default from 2.15; the number is how long the operation ran)::

    [rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/
        unbound_buffer.cc:78] Timed out waiting 60000ms for recv operation to complete
    Operation timed out after 30794 ms

How a log ends (``ending``) tells a rank that died of its own fault (a GPU fault: an XID, a
CUDA error; or a crash that is no consequence of a hang) from one that was taken down by
its own watchdog after a timeout, or that gave up when a peer went away (gloo's
``Connection closed by peer [addr]:port`` or ``Read error [addr]:port: Connection reset by
peer``, NCCL's remote error). Those two are consequences of a hang: the rank waited on
another, it caused nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Numbers of at most 18 digits: int() refuses a string of thousands, and none is that long.
_WORK = re.compile(r"WorkNCCL\((?P<body>.*?Timeout\(ms\)=(?P<timeout>\d{1,18}))\)")
_SEQ = re.compile(r"SeqNum=(\d{1,18})")
_OP = re.compile(r"OpType=(\w+)")
_RAN = re.compile(r" ran for (\d{1,18}) milliseconds")
_TIMED_OUT = re.compile(r"collective operation timeout: WorkNCCL|\) timed out in blocking wait")
_PROGRESS = re.compile(
    r"(?:(?P<kind>Timeout at NCCL work|detected by watchdog at work): (?P<seq>-?\d{1,18}), l"
    r"|Received a dump signal.*?L)"
    r"ast enqueued NCCL work: (?P<enq>-?\d{1,18}), last completed NCCL work: (?P<done>-?\d{1,18})"
)
_LOG_PREFIX = re.compile(r"\[(?:PG (?:ID )?(?P<pg>\d{1,18})[^\]]*? )?Rank (?P<rank>\d{1,18})\]")
_GLOBAL_PREFIX = re.compile(r"\[rank(\d{1,18})\]:")
# gloo's timeout while a rank waits on a peer, and nccl2's.
WAIT_TIMEOUT = re.compile(
    r"Timed out waiting (?P<timeout>\d{1,18}) ?ms for (?:recv|send) operation"
    r"|Operation timed out after (?P<ran>\d{1,18}) ms"
)
_WAIT_WORDS = ("Timed out waiting ", "Operation timed out after ")
# Substrings every report line contains: a cheap scan before any regex runs ("med out " is
# in both of _WAIT_WORDS: three substrings are checked on each line, not four).
MARKERS = ("WorkNCCL(", "NCCL work: ", "med out ")
# The Flight Recorder's word that a rank's dump is on disk, after a timeout (an INFO line of
# PyTorch's C++ log: shown only with TORCH_CPP_LOG_LEVEL=INFO).
DUMP_WRITTEN = re.compile(r"Finished writing Flight Recorder debug info to (?P<path>\S+)")

# A fault of the rank's own GPU: its process cannot go on.
_GPU_FAULT = re.compile(
    r"\bXid \([^)]*\): (?P<xid>\d{1,18})|\b(?:XID|Xid|xid)[ =:]+(?P<xid2>\d{1,18})"
    r"|CUDA error|Cuda failure|CUDA_ERROR_|cudaError[A-Z]\w*|illegal memory access"
    r"|unspecified launch failure|fallen off the bus|ncclUnhandledCudaError"
    r"|uncorrectable ECC"
)
# Words every _GPU_FAULT match holds: a quick look before the regex runs on each line.
_FAULT_WORDS = ("Xid", "XID", "xid", "CUDA error", "Cuda failure", "CUDA_ERROR_", "cudaError",
                "illegal memory", "unspecified launch", "fallen off", "ncclUnhandledCudaError",
                "uncorrectable ECC")
# How a process's end starts: the C++ runtime, a Python traceback, a signal.
_EXIT = re.compile(
    r"terminate called|Traceback \(most recent call last\)|Fatal Python error"
    r"|Segmentation fault|SIGSEGV|SIGBUS|core dumped"
    r"|Process group watchdog thread terminated with exception"
)
# An end caused by the hang itself: the watchdog's timeout, or a peer that went away.
_TIMEOUT_END = re.compile(
    r"Watchdog caught collective operation timeout|timed out in blocking wait"
    r"|Timeout at NCCL work|Some NCCL operations have failed or timed out|checkTimeout"
    r"|" + WAIT_TIMEOUT.pattern
)
_PEER_END = re.compile(
    r"remote process exited|network error|ncclRemoteError"
    r"|Connection (?:reset|closed) by (?:remote )?peer|DistNetworkError|Broken pipe"
    r"|Connection refused|communicator was aborted"
)
_EXCEPTION = re.compile(r"\bwhat\(\):\s*(?P<what>.*)|(?P<exc>\b[\w.]*(?:Error|Exception)\b:.*)")
EXIT_WINDOW = 80  # non-blank lines at the end of a log where its process's end is looked for
CAUSE_CHARS = 80
# How a log ends, in words, when not of the rank's own fault.
TIMED_OUT = "timed out waiting"
PEER_GONE = "peer gone"
STOPPED = "stopped without an error"
CONSEQUENCES = ("timeout", "peer")  # endings a hang causes: the rank waited on another


@dataclass(frozen=True)
class WatchdogReport:
    """What one watchdog line says; fields a line's vintage lacks are None (``op``, ``pg`` "")."""

    rank: int  # the rank the line names, -1 when it names none
    seq: int | None
    op: str
    timeout_ms: int | None
    ran_ms: int | None
    last_enqueued: int | None
    last_completed: int | None
    line: str
    pg: str = ""  # the process group's id ("0" is the default one), "" when not named

    @property
    def timed_out(self) -> bool:
        """False for a dump signal received from another rank that timed out."""
        return self.seq is not None or self.timeout_ms is not None or self.ran_ms is not None


@dataclass(frozen=True)
class Ending:
    """How a rank's log ends, as far as a hang is concerned."""

    kind: str  # "fault" (its own), "timeout" (ended after one), "peer" (gave up on one), ""
    cause: str  # "XID 79 in its log", "exited: ValueError: ...", TIMED_OUT, PEER_GONE, STOPPED
    line: str  # the line that shows it

    @property
    def consequence(self) -> bool:
        """The rank ended because it waited on another: it is no cause of the hang."""
        return self.kind in CONSEQUENCES


def parse_watchdog(line: str) -> WatchdogReport | None:
    """The watchdog timeout a log line reports, or None if it reports none."""
    parsed = parse_report(line)
    return parsed[0] if parsed else None


def parse_report(line: str) -> tuple[WatchdogReport, bool] | None:
    """The report and whether its rank is the global one (PyTorch's ``[rankN]:`` prefix)."""
    if "WorkNCCL(" in line and _TIMED_OUT.search(line):
        report = _parse_work(line)
    elif "NCCL work: " in line:
        report = _parse_progress(line)
    elif any(word in line for word in _WAIT_WORDS):
        report = _parse_wait(line)
    else:
        return None
    if report is None:
        return None
    named = _LOG_PREFIX.search(line)
    pg = (named.group("pg") or "") if named else ""
    prefix = _GLOBAL_PREFIX.search(line)
    if prefix:
        return _with(report, int(prefix.group(1)), pg), True
    return _with(report, int(named.group("rank")) if named else -1, pg), False


def _with(report: WatchdogReport, rank: int, pg: str) -> WatchdogReport:
    return WatchdogReport(rank, report.seq, report.op, report.timeout_ms, report.ran_ms,
                          report.last_enqueued, report.last_completed, report.line, pg)


def _parse_work(line: str) -> WatchdogReport | None:
    work = _WORK.search(line)
    if work is None:
        return None
    body = work.group("body")
    seq, op, ran = _SEQ.search(body), _OP.search(body), _RAN.search(line, work.end())
    return WatchdogReport(
        rank=-1, seq=int(seq.group(1)) if seq else None, op=op.group(1) if op else "",
        timeout_ms=int(work.group("timeout")), ran_ms=int(ran.group(1)) if ran else None,
        last_enqueued=None, last_completed=None, line=line.rstrip("\r\n"),
    )


def _parse_progress(line: str) -> WatchdogReport | None:
    progress = _PROGRESS.search(line)
    if progress is None:
        return None
    seq = progress.group("seq")
    return WatchdogReport(
        rank=-1, seq=int(seq) if seq is not None else None, op="", timeout_ms=None,
        ran_ms=None, last_enqueued=int(progress.group("enq")),
        last_completed=int(progress.group("done")), line=line.rstrip("\r\n"),
    )


def _parse_wait(line: str) -> WatchdogReport | None:
    wait = WAIT_TIMEOUT.search(line)
    if wait is None:
        return None
    timeout, ran = wait.group("timeout"), wait.group("ran")
    return WatchdogReport(
        rank=-1, seq=None, op="", timeout_ms=int(timeout) if timeout else None,
        ran_ms=int(ran) if ran else None, last_enqueued=None, last_completed=None,
        line=line.rstrip("\r\n"),
    )


def ending(lines: list[str], first_timeout: int | None) -> Ending:
    """How a rank's log ends, given the index of its first timeout report (None: none).

    A GPU fault logged before the rank's first timeout (or with none) is its own: the rank
    is the cause, even when its watchdog timed out afterwards ("fault"). A rank whose
    process ended after its own timeout, or with it (a traceback whose exception is the
    timeout), was ended by the timeout ("timeout"). A rank that did not time out and whose
    log ends with its process's end gave up on a peer when that end tells of one ("peer"),
    was ended by a timeout when the end repeats one, and else died of its own fault. ""
    when the log shows no end: it stopped without an error (killed, or frozen).
    """
    fault = _first_fault(lines, len(lines) if first_timeout is None else first_timeout)
    if fault is not None:
        return fault
    block = _exit_block(lines) if first_timeout is None else _end_with(lines, first_timeout)
    if not block:
        return Ending("", STOPPED if any(line.strip() for line in lines) else "", "")
    line = _cause_line(block)
    text = "\n".join(block)
    if first_timeout is not None or _TIMEOUT_END.search(text):
        return Ending("timeout", TIMED_OUT, line)
    if _PEER_END.search(text):
        return Ending("peer", PEER_GONE, line)
    return Ending("fault", f"exited: {_short(_exception(line))}", line)


def _end_with(lines: list[str], timeout: int) -> list[str]:
    """The process's end after the timeout at ``lines[timeout]``, or the traceback it ends:
    Python prints an exception after the frames that led to it."""
    block = _exit_block(lines[timeout:])
    if block or timeout >= len(lines):
        return block
    block = _exit_block(lines)
    return block if lines[timeout].rstrip("\r\n") in block else []


def _first_fault(lines: list[str], end: int) -> Ending | None:
    """The GPU fault among ``lines[:end]``: the first one logged (later ones are its echoes),
    or the first that names an XID."""
    lines = lines[:end]
    blob = "\n".join(lines)
    if not any(word in blob for word in _FAULT_WORDS):
        return None
    faults = [(line, found) for line in lines
              if any(word in line for word in _FAULT_WORDS) and (found := _GPU_FAULT.search(line))]
    if not faults:
        return None
    named = [(line, found) for line, found in faults if found.group("xid") or found.group("xid2")]
    line, found = (named or faults)[0]
    xid = found.group("xid") or found.group("xid2")
    cause = f"XID {xid} in its log" if xid else "a CUDA error in its log"
    return Ending("fault", cause, line.rstrip("\r\n"))


def _exit_block(lines: list[str]) -> list[str]:
    """The lines from the first sign of the process's end among the last ones, if any."""
    shown = [line.rstrip("\r\n") for line in lines[-EXIT_WINDOW * 2:] if line.strip()]
    shown = shown[-EXIT_WINDOW:]
    start = next((i for i, line in enumerate(shown) if _EXIT.search(line)), None)
    return [] if start is None else shown[start:]


def _cause_line(block: list[str]) -> str:
    """The line that best says why the process ended: its what(), else its exception."""
    whats = [line for line in block if "what():" in line]
    if whats:
        return whats[0]
    exceptions = [line for line in block if _EXCEPTION.search(line)]
    return exceptions[-1] if exceptions else block[0]


def _exception(line: str) -> str:
    found = _EXCEPTION.search(line)
    if found is None:
        return line.strip()
    return (found.group("what") or found.group("exc") or "").strip()


def _short(text: str) -> str:
    return text if len(text) <= CAUSE_CHARS else text[:CAUSE_CHARS - 1] + "…"

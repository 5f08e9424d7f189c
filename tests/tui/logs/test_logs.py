"""Reading a rank's log: tail, follow across truncation and rotation, hostile bytes,
line kinds, and finding the files from a pattern or a preset."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import pytest
from ranktop.tui.core.model import Rank
from ranktop.tui.core.text import byte_limit, clean, clean_lines
from ranktop.tui.logs import tail as logs
from ranktop.tui.logs.tail import FileLog, LogLine, classify, find_logs, sanitise

RANK = Rank(rank=11, host="gpu-node-001.cluster.local", gpu=3, node=1)


def write(path: Path, data: bytes, mode: str = "ab") -> None:
    with path.open(mode) as file:
        file.write(data)


def lines_of(*texts: str) -> bytes:
    return "".join(f"{text}\n" for text in texts).encode()


def texts(lines: list[LogLine]) -> list[str]:
    return [line.text for line in lines]


# -- tail -------------------------------------------------------------------------------

def test_tail_of_a_short_file_returns_every_line(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of("one", "two", "three"))
    assert texts(FileLog(path).tail(10)) == ["one", "two", "three"]


def test_tail_of_a_file_with_fewer_lines_than_asked_returns_every_one(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of(*(f"step {i}" for i in range(40))))
    assert texts(FileLog(path).tail(60)) == [f"step {i}" for i in range(40)]  # not 20


def test_tail_returns_only_the_last_lines(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of(*(f"step {i}" for i in range(5000))))
    assert texts(FileLog(path).tail(3)) == ["step 4997", "step 4998", "step 4999"]
    assert FileLog(path).tail(0) == []


def test_tail_of_an_empty_file(tmp_path):
    path = tmp_path / "rank.log"
    path.touch()
    log = FileLog(path)
    assert log.tail(10) == []
    write(path, lines_of("first"))
    assert texts(log.follow()) == ["first"]


def test_tail_of_a_big_file_reads_only_its_end(tmp_path, monkeypatch):
    path = tmp_path / "big.log"
    with path.open("wb") as file:
        file.truncate(1 << 30)  # a sparse gigabyte of zeros before the lines
        file.seek(1 << 30)
        file.write(lines_of(*(f"iteration {i} loss 2.{i:04d}" for i in range(1000))))
    read = []
    real_pread = os.pread

    def counting_pread(fd, size, offset):
        data = real_pread(fd, size, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting_pread)
    tail = FileLog(path).tail(200)
    assert len(tail) == 200 and tail[-1].text == "iteration 999 loss 2.0999"
    assert 0 < sum(read) <= 256 * 1024


def test_a_giant_line_does_not_make_tail_read_the_whole_file(tmp_path):
    path = tmp_path / "giant.log"
    write(path, b"x" * 30_000_000 + b"\nshort\n")
    log = FileLog(path, max_line_chars=100)
    tail = log.tail(10)
    assert log.bytes_read < 2_000_000
    assert tail[-1].text == "short"
    assert tail[0].text.startswith("…x") and tail[0].text.endswith("more characters]")


def test_partial_last_line_is_shown_by_tail_and_returned_whole_by_follow(tmp_path):
    path = tmp_path / "rank.log"
    write(path, b"done\nhalf of a li")
    log = FileLog(path)
    tail = log.tail(10)
    assert texts(tail) == ["done", "half of a li"]
    assert [line.partial for line in tail] == [False, True]
    assert log.follow() == []
    write(path, b"ne\nnext")
    assert texts(log.follow()) == ["half of a line"]
    write(path, b"\n")
    assert texts(log.follow()) == ["next"]


def test_follow_before_any_tail_starts_at_the_end(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of("old"))
    log = FileLog(path)
    assert log.follow() == []
    write(path, lines_of("new"))
    assert texts(log.follow()) == ["new"]


# -- follow -----------------------------------------------------------------------------

def test_follow_while_a_writer_appends_loses_and_repeats_nothing(tmp_path):
    path = tmp_path / "rank.log"
    path.touch()
    expected = [f"[default3]:step {i} loss {i * 0.001:.3f} " + "x" * (i % 97) for i in range(20000)]
    data = lines_of(*expected)
    log = FileLog(path)
    assert log.tail(100) == []
    done = threading.Event()

    def writer():
        chunks = random.Random(5)
        with path.open("ab", buffering=0) as file:
            pos = 0
            while pos < len(data):
                step = chunks.randint(1, 5000)  # cuts lines anywhere
                file.write(data[pos:pos + step])
                pos += step
                if chunks.random() < 0.05:
                    time.sleep(0.001)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    seen = []
    while not done.is_set():
        seen += log.follow()
    thread.join()
    seen += log.follow()
    assert texts(seen) == expected


def test_follow_skips_ahead_when_too_much_arrived(tmp_path):
    path = tmp_path / "rank.log"
    path.touch()
    log = FileLog(path, max_follow_bytes=1000)
    log.tail(10)
    burst = lines_of(*(f"line {i:05d}" for i in range(1000)))  # 11 bytes a line
    write(path, burst)
    got = log.follow()
    assert got[0].kind == "plain" and got[0].text.startswith("[ranktop: skipped ")
    skipped = int(got[0].text.split()[2])
    kept = texts(got[1:])
    assert kept[-1] == "line 00999" and len(kept) == 90
    assert skipped + 11 * len(kept) == len(burst)


def test_follow_keeps_a_flood_of_tiny_lines_small(tmp_path):
    path = tmp_path / "rank.log"
    path.touch()
    log = FileLog(path, max_follow_lines=100)
    log.tail(10)
    write(path, b"\n" * 100_000 + b"last\n")
    got = log.follow()
    assert got[0].text == "[ranktop: skipped 99901 lines]"
    assert len(got) == 101 and got[-1].text == "last"


def test_truncation_restarts_from_the_beginning(tmp_path, monkeypatch):
    path = tmp_path / "rank.log"
    write(path, lines_of(*(f"old {i}" for i in range(100))))
    log = FileLog(path)
    log.tail(5)
    write(path, lines_of("new 0", "new 1"), mode="wb")
    assert texts(log.follow()) == ["new 0", "new 1"]
    assert log.status() == "truncated: reading from the start"
    later = time.monotonic() + logs.NOTICE_SECONDS + 1
    monkeypatch.setattr(logs.time, "monotonic", lambda: later)
    assert log.status() == ""


def test_rotation_finishes_the_old_file_then_reads_the_new_one(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of("a", "b"))
    log = FileLog(path)
    log.tail(10)
    write(path, b"c\nunfinished")
    path.rename(tmp_path / "rank.log.1")
    write(path, lines_of("new 1", "new 2"))
    assert texts(log.follow()) == ["c", "unfinished", "new 1", "new 2"]
    assert log.status() == "rotated: following the new file"
    write(path, lines_of("new 3"))
    write(tmp_path / "rank.log.1", lines_of("late write to the old file"))
    assert texts(log.follow()) == ["new 3"]


def test_deletion_keeps_what_was_read_and_recreation_is_followed(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of("a", "b"))
    log = FileLog(path)
    assert texts(log.tail(10)) == ["a", "b"]
    write(path, lines_of("last words"))
    path.unlink()
    assert texts(log.follow()) == ["last words"]
    assert log.status() == "deleted: showing what was read"
    assert log.follow() == []
    assert log.status() == "deleted: showing what was read"
    write(path, lines_of("reborn"))
    assert texts(log.follow()) == ["reborn"]
    assert log.status() == "recreated: reading the new file"


def test_deleted_and_recreated_between_two_calls(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of("a"))
    log = FileLog(path)
    log.tail(10)
    keep_inode_busy = path.open("rb")  # so the new file cannot reuse the inode number
    path.unlink()
    write(path, lines_of("b"))
    assert texts(log.follow()) == ["b"]
    assert log.status() == "recreated: reading the new file"
    keep_inode_busy.close()


def test_a_missing_file_is_reported_then_read_from_its_start(tmp_path):
    path = tmp_path / "not-yet.log"
    log = FileLog(path)
    assert log.tail(10) == []
    assert log.status() == "missing"
    assert log.follow() == []
    write(path, lines_of("hello", "world"))
    assert texts(log.follow()) == ["hello", "world"]
    assert log.status() == ""


def test_io_errors_become_a_status_not_an_exception(tmp_path):
    log = FileLog(tmp_path)  # a directory
    assert log.tail(10) == []
    assert log.status().startswith("error: ")
    assert log.follow() == []
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    log = FileLog(fifo)
    assert log.tail(10) == [] and log.status() == "error: not a regular file: a named pipe (FIFO)"


# -- hostile content --------------------------------------------------------------------

BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def assert_displayable(text: str) -> None:
    for char in text:
        assert ord(char) >= 0x20, repr(text)
        assert not 0x7F <= ord(char) <= 0x9F, repr(text)
        assert char not in BIDI, repr(text)
        assert char not in "\u2028\u2029", repr(text)


@pytest.mark.parametrize(("raw", "shown"), [
    (b"\x1b[1;31mNCCL WARN\x1b[0m done", "NCCL WARN done"),            # CSI colours
    (b"a\x1b[2K\x1b[1Ab", "ab"),                                       # CSI cursor moves
    (b"\x1b[?1049hscreen", "screen"),                                   # private CSI
    (b"\x1b]0;pwned title\x07text", "text"),                            # OSC ended by BEL
    (b"\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\", "click"),        # OSC 8 ended by ST
    (b"\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),                           # DCS
    (b"\x1b_apc\x1b\\x", "x"),                                           # APC
    (b"\x1b]unterminated", "unterminated"),                             # no terminator
    (b"\x1b(Bcharset \x1b7saved\x1b8", "charset saved"),                # ESC sequences
    (b"lone escape\x1b", "lone escape"),
    (b"bell\x07 nul\x00 del\x7f", "bell\ufffd nul\ufffd del\ufffd"),    # C0 and DEL
    ("c1 \x85\x9b31mx \x9d0;t\x9c.".encode(), "c1 \ufffdx ."),            # C1 (CSI, OSC)
    (b"bad \xff\xfe utf8 \xed\xa0\x80", "bad \ufffd\ufffd utf8 \ufffd\ufffd\ufffd"),
    (b"  3%|#         |\r 50%|#####     |\r100%|##########|", "100%|##########|"),
    (b"crlf line\r\n", "crlf line"),
    (b"trailing cr\r", "trailing cr"),
    ("admin\u202e\u2066txt.exe\u2069\u200f".encode(), "admintxt.exe"),  # bidi
    (b"a\tb\tc", "a       b       c"),
    ("line\u2028sep".encode(), "line\ufffdsep"),
])
def test_sanitise(raw, shown):
    assert sanitise(raw) == shown
    assert_displayable(sanitise(raw))


def test_a_megabyte_line_is_cut_with_a_marker():
    text = sanitise(b"y" * 1_000_000)
    assert text == "y" * 4000 + "… [996000 more characters]"
    assert sanitise("é".encode() * 10_000, max_chars=10) == "é" * 10 + "… [9990 more characters]"
    assert len(sanitise(b"\t" * 100_000)) < 4100


def test_random_bytes_never_leave_a_control():
    chooser = random.Random(7)
    alphabet = [bytes([b]) for b in range(256)] + [
        b"\x1b[", b"\x1b]", b"\x1b\\", "\u202e".encode(), "\x9b".encode(), "\u2066".encode(),
        b"\r", b"\t", b"NCCL WARN "]
    for _ in range(3000):
        raw = b"".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 60)))
        text = sanitise(raw, max_chars=50)
        assert_displayable(text)
        assert "\x1b" not in text and "\t" not in text


def test_followed_lines_are_sanitised_and_cut(tmp_path):
    path = tmp_path / "rank.log"
    path.touch()
    log = FileLog(path, max_line_chars=20)
    log.tail(1)
    write(path, b"\x1b[31m" + b"z" * 1_000_000 + b"\n")
    [line] = log.follow()
    assert line.text == "z" * 20 + "… [999980 more characters]"
    # A line arriving in pieces is held within bounds until its newline.
    for _ in range(50):
        write(path, b"p" * 100_000)
        assert log.follow() == []
    assert len(log._pending.data) <= byte_limit(20)
    write(path, b"\n")
    assert log.follow()[0].text == "p" * 20 + "… [4999980 more characters]"


@pytest.mark.parametrize("update", ["\rsaving {:3d}%", "saving {:3d}%\r"])
def test_a_progress_bar_written_in_pieces_shows_its_last_state(tmp_path, update):
    path = tmp_path / "rank.log"
    path.touch()
    log = FileLog(path, max_line_chars=12)  # the updates together outgrow one line's bytes
    log.tail(1)
    for percent in range(0, 101):
        write(path, update.format(percent).encode())
        assert log.follow() == []
    write(path, b"\n")
    assert texts(log.follow()) == ["saving 100%"]


# -- classify ---------------------------------------------------------------------------

KINDS = {
    "nccl_info": [
        "gpu-node-001:48211:48211 [3] NCCL INFO Bootstrap : Using eth0:10.18.4.21<0>",
        "[default3]:gpu-node-001:48211:48211 [3] NCCL INFO comm 0x55d0c8a0e1f0 rank 11 "
        "nranks 16 cudaDev 3 nvmlDev 3 busId 9b000 commId 0x8a3f2c1d5e6b7a90 - Init COMPLETE",
        "3: gpu-node-001:48211:48211 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
        "gpu-node-001:48211:48302 [3] NCCL INFO Channel 00/0 : 11[3] -> 3[3] [send] via NET/IB/0",
        "NCCL version 2.21.5+cuda12.4",
        "[1] gpu-node-001:48211:48211 [3] NCCL INFO NCCL version 2.18.3+cuda12.2",
        "gpu-node-001:48211:48302 [3] 1234.567890 ncclProxyProgress:812 NCCL TRACE idle",
        # The proxy service thread at a communicator's teardown: routine, not the network.
        "gpu-node-001:48211:48333 [3] NCCL INFO [Service thread] Connection closed by localRank 3",
        "3: [rank3]:gpu-node-001:48211:48333 [3] NCCL INFO [Service thread] Connection closed by"
        " localRank 1",
    ],
    "nccl_warn": [
        "[2026-01-02 03:04:05] gpu-node-001:48211:48290 [3] enqueue.cc:1556 NCCL WARN "
        "Cuda failure 'invalid argument'",
        "[rank11]: [2026-01-02 03:04:05.123] gpu-node-001:48211:48290 [3] init.cc:1432 "
        "(ncclCommInitRankFunc) NCCL WARN Duplicate GPU detected : rank 11 and rank 3 both on "
        "CUDA device 9b000",
        "[default3]:gpu-node-001:48211:48211 [3] proxy.cc:1520 NCCL WARN [Proxy Service 11] "
        "Failed to execute operation Connect from rank 11, retcode 3",
    ],
    "watchdog": [
        "[rank11]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 11] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=48113, OpType=ALLREDUCE, NumelIn=262144, "
        "NumelOut=262144, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=2212, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800856 "
        "milliseconds before timing out.",
        "9: [rank9]:[E211 16:12:38.000000000 ProcessGroupNCCL.cpp:697] [PG 1 Rank 9] Timeout at "
        "NCCL work: 48113, last enqueued NCCL work: 48113, last completed NCCL work: 48112.",
        "RuntimeError: [Rank 0] Work WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=60000) "
        "timed out in blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).",
        "[rank5]:[E1206 18:44:13.100000000 ProcessGroupNCCL.cpp:1316] [PG ID 0 PG GUID "
        "0(default_pg) Rank 5] Exception (either an error or timeout) detected by watchdog at "
        "work: 48113, last enqueued NCCL work: 48113, last completed NCCL work: 48112.",
        # gloo's timeouts as PyTorch 2.14.1 repeats them, from a real job's torchrun console.
        "[default2]:[rank2]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/"
        "transport/tcp/unbound_buffer.cc:78] Timed out waiting 10000ms for recv operation to "
        "complete",
        "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
        "unbound_buffer.cc:129] Timed out waiting 10000ms for send operation to complete",
        # nccl2's, in the words of the 2.14.1 wheel's strings.
        "[rank3]: Operation timed out after 600412 ms",
        "Finished writing Flight Recorder debug info to /var/tmp/nccl_trace_rank_3",
    ],
    "net": [
        "[2026-01-02 03:04:05] gpu-node-001:48211:48301 [3] transport/net_ib.cc:1295 NCCL WARN "
        "NET/IB : Got completion from peer 10.18.4.22<44021> with status=12 opcode=0 len=0 "
        "vendor err 129 (Recv) localGid ::ffff:10.18.4.21 remoteGids::ffff:10.18.4.22 hca mlx5_1",
        "gpu-node-001:48211:48310 [3] misc/socket.cc:538 NCCL WARN socketStartConnect: Connect "
        "to 10.18.4.22<38745> failed : Software caused connection abort",
        "[rank11]:[E1206 18:44:14.000000000 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID "
        "0(default_pg) Rank 11] Process group watchdog thread terminated with exception: NCCL "
        "error: remote process exited or there was a network error, NCCL version 2.21.5",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to "
        "[gpu-node-000]:29500 (errno: 111 - Connection refused).",
        "gpu-node-001:48211:48301 [3] NCCL INFO transport/net_ib.cc:890 ibv_modify_qp failed "
        "with 110 Connection timed out",
        # gloo's peer gone, from a real job's torchrun console (PyTorch 2.14.1).
        "[default7]:[rank7]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/"
        "transport/tcp/pair.cc:561] Connection closed by peer [127.0.0.1]:21641. This is "
        "typically caused by a remote worker crashing. Check the logs of the remote worker "
        "before reporting an error. GLHF! \U0001f3d6\ufe0f",
        "[rank5]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
        "pair.cc:545] Read error [127.0.0.1]:55979: Connection reset by peer. This is "
        "typically caused by a remote worker hanging or bugs in the application. Check the "
        "logs of the remote worker before reporting an error. GLHF! \U0001f3d6\ufe0f",
    ],
    "error": [
        "Traceback (most recent call last):",
        "[default3]:RuntimeError: CUDA error: an illegal memory access was encountered",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "[rank3]:[E1206 18:44:20.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID "
        "0(default_pg) Rank 3] Process group destroyed while work still pending.",
        "E1206 18:44:12.715298 48211 cuda_graph.cc:89] CUDA graph capture failed",
        "2026-01-02 03:04:05,123 ERROR train.py:88 loss is NaN at step 48113",
        # A process going down repeats the watchdog's message: the crash, not a new timeout.
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread "
        "terminated with exception: [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=48113, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
        "Timeout(ms)=600000) ran for 600031 milliseconds before timing out.",
        "[default1]:  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL("
        "SeqNum=2212, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800856 milliseconds "
        "before timing out.",
        "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:632 (most recent call first):",
        # The watchdog's consequence line, after the timeout it follows: no timeout itself.
        "[rank3]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:667] [PG ID 0 PG GUID "
        "0(default_pg) Rank 3] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.",
        "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the"
        " asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.",
        # A rank's own error in PyTorch's repeat of its traceback (the first two from a real
        # job, PyTorch 2.14.1; a CPU job has no CUDA error).
        "[default2]:[rank2]: ValueError: bad batch shape (3, 224) for model input",
        "[rank0]: Traceback (most recent call last):",
        "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
    ],
    "plain": [
        "",
        "[default0]:step 1200 | loss 2.3141 | lr 3.0e-04 | tokens/s 1.21M",
        "[W1206 18:44:12.000000000 Utils.hpp:135] Warning: Environment variable "
        "NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead",
        "epoch 3: validation error 0.123",
        "[ranktop: skipped 1200 bytes]",
    ],
}


@pytest.mark.parametrize(("kind", "line"),
                         [(kind, line) for kind, lines in KINDS.items() for line in lines])
def test_classify(kind, line):
    assert classify(line) == kind


@pytest.mark.parametrize("raws", [
    [b"step 1", b"", b"[rank3]: step 2"],
    [b"step 1", b"tab\there", b"cr\rover"],
    [b"caf\xc3\xa9 \x1b[31mred\x1b[0m", b"ok"],
    [b"x" * 50, b"short"],
    [],
])
def test_clean_lines_is_clean_line_by_line(raws):
    assert clean_lines(raws, 40) == [clean(raw, 40) for raw in raws]


def test_lines_come_with_their_kind(tmp_path):
    path = tmp_path / "rank.log"
    write(path, lines_of(*KINDS["watchdog"][:1], *KINDS["nccl_info"][:1]))
    assert [line.kind for line in FileLog(path).tail(2)] == ["watchdog", "nccl_info"]


# -- find_logs --------------------------------------------------------------------------

def make(path: Path, text: str = "", age: float = 0.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_torchrun_keeps_the_newest_run_and_its_newest_attempts(tmp_path):
    host = tmp_path / "tr" / "gpu-node-001"
    for attempt in (0, 2, 12):  # an older job's run directory, with more restarts
        make(host / "job6_q1w2" / f"attempt_{attempt}" / "3" / "stderr.log", age=9000)
    for attempt in (1, 2, 3, 9, 10):
        for stream in ("stdout", "stderr"):
            make(host / "job7_x8k2" / f"attempt_{attempt}" / "3" / f"{stream}.log",
                 age=100 - attempt)
    make(host / "job7_x8k2" / "attempt_10" / "4" / "stderr.log")  # another local rank
    found = find_logs(f"torchrun:{tmp_path / 'tr'}", RANK, node_rank=1, local_rank=3,
                      world_size=16)
    run = host / "job7_x8k2"
    kept = (10, 9, 3, 2)  # MAX_ATTEMPTS newest, the newest first; attempt_1 left out
    assert found == [run / f"attempt_{attempt}" / "3" / f"{stream}.log"
                     for attempt in kept for stream in ("stderr", "stdout")]


def test_torchrun_with_a_full_host_name_directory(tmp_path):
    rank = Rank(rank=2, host="gpu-node-004", gpu=2, node=0)
    log = make(tmp_path / "gpu-node-004.cluster.local" / "r_1" / "attempt_0" / "2" / "stdout.log")
    assert find_logs(f"torchrun:{tmp_path}", rank, 0, 2, 8) == [log]
    assert find_logs(f"torchrun:{tmp_path}", rank, 0, 5, 8) == []


def test_torchrun_in_a_folder_whose_name_looks_like_a_glob(tmp_path):
    root = tmp_path / "runs[2J]*?"  # torchrun:DIR names a folder, not a pattern
    rank = Rank(rank=2, host="gpu-node-004", gpu=2, node=0)
    log = make(root / "gpu-node-004" / "r_1" / "attempt_0" / "2" / "stderr.log")
    assert find_logs(f"torchrun:{root}", rank, 0, 2, 8) == [log]


def test_torchrun_where_each_pod_writes_its_own_tree(tmp_path):
    """Two pods on one node, each with local ranks 0..3: the pod's tree is the rank's."""
    rank = Rank(rank=6, host="gpu-node-004", gpu=2, node=0, pod="llama-worker-1")
    mine = make(tmp_path / "llama-worker-1" / "llama_ab12" / "attempt_0" / "2" / "stderr.log")
    make(tmp_path / "llama-worker-0" / "llama_cd34" / "attempt_0" / "2" / "stderr.log")
    make(tmp_path / "gpu-node-004" / "old_ef56" / "attempt_0" / "2" / "stderr.log")
    assert find_logs(f"torchrun:{tmp_path}", rank, 0, 2, 8) == [mine]
    without_pod = Rank(rank=6, host="gpu-node-004", gpu=2, node=0)
    assert find_logs(f"torchrun:{tmp_path}", without_pod, 0, 2, 8) != [mine]


def test_patterns_take_the_pod_and_the_node(tmp_path):
    rank = Rank(rank=6, host="gpu-node-004", gpu=2, node=0, pod="llama-worker-1")
    log = make(tmp_path / "gpu-node-004" / "llama-worker-1" / "rank6.log")
    assert find_logs(f"{tmp_path}/{{node}}/{{pod}}/rank{{rank}}.log", rank, 0, 2, 8) == [log]
    bare = make(tmp_path / "gpu-node-004" / "gpu-node-004" / "rank6.log")
    no_pod = Rank(rank=6, host="gpu-node-004", gpu=2, node=0)  # {pod} is then the host
    assert find_logs(f"{tmp_path}/{{node}}/{{pod}}/rank{{rank}}.log", no_pod, 0, 2, 8) == [bare]
    climbing = Rank(rank=6, host="gpu-node-004", gpu=2, node=0, pod="../../etc")
    assert find_logs(f"{tmp_path}/{{pod}}/rank{{rank}}.log", climbing, 0, 2, 8) == []


def nccl_file(path: Path, lines: list[str], age: float = 0.0) -> Path:
    return make(path, "".join(line + "\n" for line in lines), age)


INIT = ("gpu-node-001:{pid}:{pid} [{dev}] NCCL INFO ncclCommInitRank comm 0x7f3a2c0{pid} rank "
        "{rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId 9b000 commId 0x1f2e3d4c5b6a7988"
        " - Init COMPLETE")


def test_nccl_file_chosen_by_its_init_line(tmp_path):
    directory = tmp_path / "nccl"
    nccl_file(directory / "nccl.gpu-node-001.1111", [
        "gpu-node-001:1111:1111 [2] NCCL INFO Bootstrap : Using eth0:10.18.4.21<0>",
        INIT.format(pid=1111, dev=2, rank=10, nranks=16),
        INIT.format(pid=1111, dev=2, rank=11, nranks=2),  # a sub-communicator's rank 11
    ])
    wanted = nccl_file(directory / "nccl.gpu-node-001.2222",
                       [INIT.format(pid=2222, dev=3, rank=11, nranks=16)], age=50)
    nccl_file(directory / "nccl.gpu-node-002.3333", [INIT.format(pid=3333, dev=3, rank=11,
                                                                 nranks=16)])
    found = find_logs(f"nccl:{directory}/nccl.%h.%p", RANK, 1, 3, 16)
    assert found == [wanted]


def test_nccl_file_chosen_by_cuda_device_without_init_lines(tmp_path):
    directory = tmp_path / "nccl"
    warn = ("\n[2026-01-02 03:04:05] gpu-node-001:{pid}:{pid} [{dev}] transport/net_ib.cc:1295 "
            "NCCL WARN NET/IB : Got async event : port error")
    for pid, dev in ((4001, 1), (4002, 3), (4003, 5)):
        nccl_file(directory / f"nccl%gpu-node-001.{pid}", [warn.format(pid=pid, dev=dev)])
    found = find_logs(f"nccl:{directory}/nccl%%%h.%p", RANK, 1, 3, 16)
    assert found == [directory / "nccl%gpu-node-001.4002"]
    assert find_logs(f"nccl:{directory}/nccl%%%h.%p", RANK, 1, 7, 16) == []


def test_nccl_reads_only_the_head_of_each_candidate(tmp_path):
    filler = "gpu-node-001:5:5 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via P2P/IPC\n" * 4000
    make(tmp_path / "nccl.gpu-node-001.5", filler + INIT.format(pid=5, dev=3, rank=11,
                                                                 nranks=16) + "\n")
    assert find_logs(f"nccl:{tmp_path}/nccl.%h.%p", RANK, 1, 3, 16) == []


def test_slurm_patterns(tmp_path):
    out = make(tmp_path / "train-48113-0011.out")
    make(tmp_path / "train-48113-0010.out")
    per_node = make(tmp_path / "gpu-node-001-1.err")
    literal = make(tmp_path / "100%-11.log")
    assert find_logs(f"slurm:{tmp_path}/train-%j-%4t.out", RANK, 1, 3, 16) == [out]
    assert find_logs(f"slurm:{tmp_path}/%N-%n.err", RANK, 1, 3, 16) == [per_node]
    assert find_logs(f"slurm:{tmp_path}/100%%-%t.log", RANK, 1, 3, 16) == [literal]
    assert find_logs(f"slurm:{tmp_path}/%x_%A_%a-%t.log", RANK, 1, 3, 16) == []


def test_raw_patterns_fill_placeholders_and_put_the_newest_first(tmp_path):
    old = make(tmp_path / "job1" / "gpu-node-001.cluster.local" / "rank011-local3.log", age=500)
    new = make(tmp_path / "job2" / "gpu-node-001.cluster.local" / "rank011-local3.log")
    make(tmp_path / "job2" / "gpu-node-001.cluster.local" / "rank012-local4.log")
    spec = f"{tmp_path}/*/{{host}}/rank{{rank:03d}}-local{{local_rank}}.log"
    assert find_logs(spec, RANK, 1, 3, 16) == [new, old]
    short = make(tmp_path / "n1" / "gpu-node-001.txt")
    assert find_logs(f"{tmp_path}/n{{node_rank}}/{{short_host}}.txt", RANK, 1, 3, 16) == [short]


def test_host_names_cannot_glob_or_climb(tmp_path):
    make(tmp_path / "logs" / "abc.log")
    make(tmp_path / "secret.log")
    wild = Rank(rank=0, host="a*", gpu=0, node=0)
    climbing = Rank(rank=0, host="../secret", gpu=0, node=0)
    assert find_logs(f"{tmp_path}/logs/{{host}}.log", wild, 0, 0, 1) == []
    assert find_logs(f"{tmp_path}/logs/{{host}}.log", climbing, 0, 0, 1) == []


@pytest.mark.parametrize(("spec", "says"), [
    ("", "empty"),
    ("   ", "empty"),
    ("journald:/var/log", "unknown log preset 'journald'"),
    ("torchrun:", "needs a path"),
    ("/logs/{gpu_index}.log", "unknown placeholder {gpu_index}"),
    ("/logs/{rank.log", "bad log pattern"),
    ("slurm:/logs/%q-%t.out", "unknown field %q"),
    ("slurm:/logs/%11t.out", "padding 11"),
])
def test_bad_specs_raise_value_error(spec, says):
    with pytest.raises(ValueError, match=says.replace("{", r"\{").replace("}", r"\}")):
        find_logs(spec, RANK, 1, 3, 16)


def test_presets_are_documented():
    from ranktop.tui.logs import discovery as log_discovery

    assert set(logs.PRESETS) == {"torchrun", "nccl", "slurm"}
    for name in logs.PRESETS:
        assert f"``{name}:" in log_discovery.__doc__

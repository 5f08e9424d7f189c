"""A rank's logs read a page at a time by request: what a ``RemoteLog`` gives is what the
log itself gives, in pages never over their bound, and closing it releases the files."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

from ranktop.tui.engine.link import packed, unpickled
from ranktop.tui.engine.protocol import Page
from ranktop.tui.engine.remote_log import LINE_BYTES, LOG_REQUESTS, LogShelf, RemoteLog, open_remote
from ranktop.tui.logs.merged import MergedLog
from ranktop.tui.logs.tail import FileLog

PAGE = 1000  # bytes: a few lines a page


class Piped:
    """An engine answering at once, each answer pickled and back as over the pipe."""

    def __init__(self, shelf: LogShelf) -> None:
        self.shelf = shelf
        self.sizes: list[int] = []  # of each page's text

    def answer(self, request: object) -> object:
        value = LOG_REQUESTS[type(request)](self.shelf, unpickled(packed(request)))
        if isinstance(value, Page):
            self.sizes.append(sum(len(text.encode()) + LINE_BYTES for text, *_ in value.lines))
        return unpickled(packed(value))

    def ask(self, request: object) -> Future:
        future: Future = Future()
        future.set_result(self.answer(request))
        return future


def write(path: Path, lines: list[str]) -> None:
    with path.open("a") as log:
        log.writelines(f"{line}\n" for line in lines)


def both_logs(paths: list[Path]) -> tuple[MergedLog, RemoteLog, Piped]:
    """The same files as a local log and as a remote one on a shelf of small pages."""
    local = MergedLog([FileLog(path) for path in paths])
    engine = Piped(LogShelf(lambda rank_map, rank: ([MergedLog([FileLog(p) for p in paths])],
                                                    "found"), page_bytes=PAGE))
    (remote,), note = open_remote(engine, None, 0)
    assert note == "found"
    return local, remote, engine


def stamped(start: int, count: int, what: str) -> list[str]:
    return [f"2026-11-25 04:{(start + i) // 60:02d}:{(start + i) % 60:02d} {what} {i}"
            for i in range(count)]


def test_the_tail_and_what_follows_are_the_same_read_remotely_in_small_pages(tmp_path):
    err, out = tmp_path / "rank5.err.log", tmp_path / "rank5.out.log"
    write(err, stamped(0, 40, "step"))
    write(out, stamped(20, 40, "Traceback ✗ naïve"))
    local, remote, engine = both_logs([err, out])
    tail = remote.tail(60)
    assert tail == local.tail(60) and len(tail) == 80  # each file's 40, merged
    assert len(engine.sizes) > 5 and max(engine.sizes) <= PAGE  # several pages, each bounded
    assert remote.follow() == local.follow() == []
    write(err, stamped(100, 300, "flood"))
    engine.sizes.clear()
    followed = remote.follow()
    assert followed == local.follow() and len(followed) == 300
    assert max(engine.sizes) <= PAGE
    assert remote.status() == local.status() == ""


def test_a_rotated_predecessor_and_the_rotation_itself_read_the_same(tmp_path):
    path = tmp_path / "rank5.log"
    write(path, stamped(0, 30, "before the crash"))
    local, remote, _ = both_logs([path])
    remote.tail(10), local.tail(10)
    path.rename(tmp_path / "rank5.log.1")
    write(path, stamped(40, 3, "after"))
    assert remote.follow() == local.follow()
    assert remote.status() == local.status() == "rotated: following the new file"
    tail = remote.tail(20)
    assert tail == local.tail(20)
    assert any("before rank5.log was rotated" in line.text for line in tail)


def test_a_line_longer_than_a_page_crosses_alone(tmp_path):
    path = tmp_path / "rank5.log"
    write(path, ["short", "x" * 3000, "short again"])
    local, remote, engine = both_logs([path])
    assert remote.tail(10) == local.tail(10)
    assert len(engine.sizes) == 3  # the long line in a page of its own


def test_closing_a_remote_log_releases_the_engines_files(tmp_path):
    path = tmp_path / "rank5.log"
    write(path, ["one"])
    _, remote, engine = both_logs([path])
    remote.tail(5)
    (held,) = engine.shelf._shelved.values()
    assert held.log.logs[0]._fd is not None
    remote.close()
    assert len(engine.shelf) == 0 and held.log.logs[0]._fd is None
    try:
        engine.shelf.follow(remote.log_id)
    except ValueError as error:
        assert "no log open under id" in str(error)
    else:
        raise AssertionError("a closed log was read")

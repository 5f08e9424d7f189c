"""A bundle on disk: named by job and UTC moment, never over anything, whole or not at all,
owner-only; read back from a folder or a .tar.gz; anything else refused in one line."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from dataclasses import replace

import pytest
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.bundle.saved import FORMAT, NotABundle, Saved, cleared, decoded, encoded
from ranktop.tui.bundle.write import bundle_name, sharing, write_bundle
from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.gpu_data import GpuCoverage
from ranktop.tui.core.model import Frame, Health, Rank, RankMap, SourceStatus
from ranktop.tui.engine.snapshot import RankHistory, Snapshot

MOMENT = 1_795_000_000.0  # 2026-11-18T11:06:40Z


def a_saved(job: str = "train/llm 70b", status: str = "ok") -> Saved:
    ranks = RankMap((Rank(0, "node-a", 0, 0), Rank(1, "node-a", 1, 0)), ("node-a",), 8, "test")
    frame = Frame(MOMENT, {"sm_active": [0.5, float("nan")]}, {"step": 12.0})
    analysis = Analysis(SourceStatus("test", Health.OK, MOMENT, status), ranks, frame)
    return Saved(job, MOMENT + 5, Snapshot(3, analysis, 1), {}, 1, ranktop="0.1.0")


def test_the_name_is_the_job_as_a_file_name_can_hold_it_and_the_utc_moment():
    assert bundle_name("train/llm 70b", MOMENT) == "train-llm-70b-20261118T110640Z"
    assert bundle_name("../..", MOMENT) == "job-20261118T110640Z"


def test_what_is_saved_reads_back_equal_nan_included():
    saved = decoded(encoded(a_saved()))
    assert saved.snapshot.analysis.rank_map == a_saved().snapshot.analysis.rank_map
    values = saved.snapshot.analysis.frame.values["sm_active"]
    assert values[0] == 0.5 and values[1] != values[1]
    assert saved.moment == MOMENT and saved.selected == 1


def test_a_job_without_gpu_data_reads_back_by_local_rank_its_maps_folded():
    saved = a_saved()
    analysis = saved.snapshot.analysis
    cpu_job = replace(analysis.rank_map, ranks=tuple(
        replace(r, gpu_named=False) for r in analysis.rank_map.ranks))
    folded = replace(analysis, rank_map=cpu_job,
                     gpu=GpuCoverage(any_seen=False, never=frozenset({"sm_active", "nvlink"})))
    back = decoded(encoded(replace(saved, snapshot=replace(saved.snapshot, analysis=folded))))
    assert back.snapshot.analysis.rank_map.ranks[1].place == "node-a local rank 1"
    assert back.snapshot.analysis.gpu == folded.gpu


def test_every_text_can_be_cleared_of_a_secret_in_lists_too():
    saved = a_saved(status="token s3cr3t refused")
    analysis = saved.snapshot.analysis
    ranks = replace(analysis.rank_map, ranks=(replace(analysis.rank_map.ranks[0],
                                                      host="s3cr3t-node"),
                                              analysis.rank_map.ranks[1]))
    saved = replace(saved, snapshot=replace(saved.snapshot,
                                            analysis=replace(analysis, rank_map=ranks)))
    saved = cleared(saved, lambda t: t.replace("s3cr3t", "*"))
    assert saved.snapshot.analysis.status.message == "token * refused"
    assert saved.snapshot.analysis.rank_map.ranks[0].host == "*-node"
    assert b"s3cr3t" not in encoded(saved)


@pytest.mark.parametrize("packed", [False, True])
def test_a_bundle_is_written_whole_owner_only_and_read_back(tmp_path, packed):
    files = {"README.txt": b"hello\n", "console.msgpack": encoded(a_saved())}
    path = write_bundle(tmp_path, "job-x", files, packed)
    assert path.name == ("job-x.ranktop.tar.gz" if packed else "job-x.ranktop")
    assert stat.S_IMODE(path.stat().st_mode) == (0o600 if packed else 0o700)
    assert read_bundle(path).job == "train/llm 70b"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no scratch left behind


def test_a_name_taken_is_never_written_over(tmp_path):
    mine = tmp_path / "job-x.ranktop"
    mine.mkdir()
    (mine / "notes").write_text("mine")
    path = write_bundle(tmp_path, "job-x", {"README.txt": b"x"}, packed=False)
    assert path.name == "job-x-2.ranktop" and (mine / "notes").read_text() == "mine"


def test_what_is_not_a_bundle_is_said_in_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "text").write_text("hello")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("x/README.txt")
        tar.addfile(info, io.BytesIO(b""))
    (tmp_path / "other.tar.gz").write_bytes(buffer.getvalue())
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "console.msgpack").write_bytes(b"\x93garbage")
    for name in ("empty", "text", "other.tar.gz", "missing", "bad"):
        with pytest.raises(NotABundle) as error:
            read_bundle(tmp_path / name)
        assert "\n" not in str(error.value)


def test_a_bundle_of_another_format_names_it(tmp_path):
    import msgspec

    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "console.msgpack").write_bytes(
        msgspec.msgpack.encode({"format": FORMAT + 1, "ranktop": "9.0"}))
    with pytest.raises(NotABundle, match=r"ranktop 9\.0 in format"):
        read_bundle(tmp_path / "b")


def test_rank_histories_travel(tmp_path):
    from ranktop.tui.bundle.saved import RankSaved
    from ranktop.tui.core.history import Point

    history = RankHistory(1, {"temperature": (Point(MOMENT, 80.0, 60.0),)})
    saved = Saved("j", MOMENT, a_saved().snapshot, {1: RankSaved(1, history)})
    assert decoded(encoded(saved)).ranks[1].history.series("temperature", 1)[0].value == 80.0


def test_the_notice_says_who_can_read_a_bundle_and_the_chmod_that_shares_it(tmp_path):
    import getpass

    me = getpass.getuser()
    folder = write_bundle(tmp_path, "job-x", {"README.txt": b"x"}, packed=False)
    packed = write_bundle(tmp_path, "job-x", {"README.txt": b"x"}, packed=True)
    assert sharing(folder) == (
        f"readable by {me} only (mode 0700: it holds the job's log lines); to share it here: "
        f"chmod -R go+rX {folder}, or copy it to whoever needs it")
    assert f"{me} only (mode 0600" in sharing(packed) and f"chmod go+r {packed}," in sharing(
        packed)
    packed.chmod(0o640)
    assert "readable by " + me + " and group " in sharing(packed)
    packed.chmod(0o644)
    assert sharing(packed).startswith("readable by anyone on this machine (mode 0644")
    odd = tmp_path / "it's here"
    odd.mkdir()
    assert "chmod -R go+rX '" in sharing(odd)  # quoted for the shell
    assert sharing(tmp_path / "gone") == ""


@pytest.mark.parametrize(("sharing_", "file_mode", "folder_mode"), [
    ("owner", 0o600, 0o700), ("group", 0o640, 0o750), ("everyone", 0o644, 0o755)])
@pytest.mark.parametrize("packed", [False, True])
def test_a_bundle_is_as_readable_as_the_user_chose_whatever_the_umask(
        tmp_path, packed, sharing_, file_mode, folder_mode):
    files = {"README.txt": b"hello\n", "logs/rank-3.log": b"line\n",
             "console.msgpack": encoded(a_saved())}
    was = os.umask(0o077)  # a strict umask must not narrow what the user chose
    try:
        path = write_bundle(tmp_path, "job-x", files, packed, sharing_)
    finally:
        os.umask(was)
    if packed:
        assert stat.S_IMODE(path.stat().st_mode) == file_mode
        return
    assert stat.S_IMODE(path.stat().st_mode) == folder_mode
    assert stat.S_IMODE((path / "logs").stat().st_mode) == folder_mode
    assert {stat.S_IMODE(p.stat().st_mode) for p in path.rglob("*") if p.is_file()} == {
        file_mode}
    assert read_bundle(path).job == "train/llm 70b"


def test_a_sharing_nobody_knows_is_a_configuration_error(tmp_path):
    from ranktop.tui.settings.config import load_settings
    from ranktop.tui.settings.reader import ConfigError

    config = tmp_path / "config.toml"
    config.write_text('[bundle]\nmode = "world"\n')
    with pytest.raises(ConfigError, match="mode"):
        load_settings(config, environ={})
    config.write_text('[bundle]\nmode = "group"\n')
    assert load_settings(config, environ={}).bundle.mode == "group"

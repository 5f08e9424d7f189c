"""The dump unpickler builds plain data and runs nothing a pickle names."""

from __future__ import annotations

import os
import pickle
import pickletools
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from ranktop.tui.flight.unpickle import DumpError, load_plain

from tests.tui.properties import FEW


class _Exploit:
    """Unpickled by ``pickle.load``, this would run a shell command."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_pickle_that_runs_os_system_is_refused_and_runs_nothing(tmp_path: Path,
                                                                  protocol: int) -> None:
    witness = tmp_path / "ran"
    data = pickle.dumps({"version": "2.10", "entries": [_Exploit(f"touch {witness}")]},
                        protocol=protocol)
    with pytest.raises(DumpError, match=r"system: only plain data is read"):
        load_plain(data)
    assert not witness.exists()
    pickle.loads(data)  # the same bytes, unrestricted, do run it: the test can fail
    assert witness.exists()


@pytest.mark.parametrize("global_name", [b"builtins\neval", b"subprocess\ncall",
                                         b"collections\nOrderedDict", b"torch\nload"])
def test_every_other_global_is_refused_by_name(global_name: bytes) -> None:
    data = b"c" + global_name + b"\n(S'1'\ntR."
    with pytest.raises(DumpError) as caught:
        load_plain(data)
    assert global_name.replace(b"\n", b".").decode() in str(caught.value)


def test_torchscript_list_builders_give_plain_lists() -> None:
    data = b"ctorch.jit._pickle\nbuild_intlist\n(]q\x00(K\x01K\x02etR."
    assert load_plain(data) == [1, 2]
    tensors = b"ctorch.jit._pickle\nbuild_tensorlist\n(]tR."
    with pytest.raises(DumpError, match="build_tensorlist"):
        load_plain(tensors)
    strings = b"ctorch.jit._pickle\nbuild_intlist\n(]q\x00(X\x01\x00\x00\x00aetR."
    with pytest.raises(DumpError, match="other than numbers"):
        load_plain(strings)


def test_a_persistent_id_is_refused() -> None:
    data = b"P1\n."
    with pytest.raises(DumpError, match="persistent id"):
        load_plain(data)


def test_plain_data_comes_back_whole() -> None:
    doc = {"version": "2.4", "pg_config": {"0": {"ranks": "[0, 1]"}},
           "entries": [{"process_group": ("0", "default_pg"), "frames": [], "ok": True,
                        "x": 1.5, "none": None, "big": 2**70}]}
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert load_plain(pickle.dumps(doc, protocol=protocol)) == doc


def test_an_object_built_by_opcodes_alone_is_refused() -> None:
    # BUILD on a list: pickle would set attributes on it; here that fails, as one line.
    data = pickletools.optimize(b"(lp0\n(dp1\nS'a'\np2\nI1\nsb.")
    with pytest.raises(DumpError):
        load_plain(data)


@FEW
@given(st.binary(max_size=300))
@example(b"F\x01\n")  # a float opcode whose text ends in a control: quoted in the error
def test_any_bytes_give_data_or_a_dump_error(data: bytes) -> None:
    try:
        load_plain(data)
    except DumpError as error:
        assert "\n" not in str(error)

"""A pickle reader for Flight Recorder dumps that builds plain data and runs nothing.

A dump is written by the job's processes: anything that can write to the dump folder can
put a pickle there, and ``pickle.load`` runs whatever callable a pickle names. This reader
builds only what pickle's own opcodes make (dicts, lists, tuples, strings, bytes, numbers,
booleans, None) and admits by name only TorchScript's list builders
(``torch.jit._pickle.build_intlist`` and its float and bool kin), which PyTorch's C++
pickler may write, mapped to a plain ``list`` of scalars. Any other global (a class, a
function such as ``os.system``), a persistent id or an extension code stops the load with
a ``DumpError`` that names it; the named thing is never imported or called.
"""

from __future__ import annotations

import io
import pickle

from ..core.text import plain

_SCALARS = (int, float, bool)


class DumpError(ValueError):
    """A dump that cannot be read as plain data; the message is one line."""


def _scalar_list(items: object) -> list:
    if not isinstance(items, list) or not all(isinstance(i, _SCALARS) for i in items):
        raise DumpError("a TorchScript list builder was given something other than numbers")
    return list(items)


_ADMITTED = {
    ("torch.jit._pickle", "build_intlist"): _scalar_list,
    ("torch.jit._pickle", "build_doublelist"): _scalar_list,
    ("torch.jit._pickle", "build_boollist"): _scalar_list,
}


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        admitted = _ADMITTED.get((module, name))
        if admitted is None:
            shown = f"{module}.{name}"[:120].encode("ascii", "backslashreplace").decode()
            raise DumpError(f"the pickle refers to {shown}: only plain data is read")
        return admitted

    def persistent_load(self, pid: object) -> object:
        raise DumpError("the pickle holds a persistent id: only plain data is read")


def load_plain(data: bytes) -> object:
    """The plain data a pickle holds; DumpError for anything else or a broken pickle."""
    try:
        # A reader that can peek: without it the C unpickler asks for every opcode alone.
        return _PlainUnpickler(io.BufferedReader(io.BytesIO(data), 1 << 16)).load()
    except DumpError:
        raise
    except RecursionError:
        raise DumpError("the pickle nests too deeply") from None
    except MemoryError:
        raise DumpError("the pickle needs more memory than is left") from None
    except Exception as error:  # a broken pickle raises almost anything: one line each
        kind = error.__class__.__name__
        detail = plain(str(error), 160)  # it quotes the dump's bytes, controls included
        raise DumpError(f"not a readable pickle ({kind}: {detail})") from None

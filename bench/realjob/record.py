"""An incident of the rig, kept for CI: one ``incident.tar.gz`` and its ``truth.json``.

The archive holds what the real stack wrote, with the files' modification times:

- ``prometheus/``: Prometheus's data folder, shut down cleanly (a Prometheus started on a
  copy replays it, staleness markers included: a target that went down ends its series
  there as it did live);
- ``logs/<host>/``: each agent's ``--log-dir`` tree, every attempt; ``logs/<host>.console``:
  the agent's ``--tee`` console;
- ``fr/``: the Flight Recorder dumps the ranks wrote.

Machine paths (the rig's folder, the Python environment) are rewritten to neutral ones in
text files and inside the pickled dumps, keeping every other byte and every time.
"""

from __future__ import annotations

import io
import pickle
import sys
import tarfile
from pathlib import Path

RIG_PATH = "/run/realjob"
PYTHON_PATH = "/opt/python"
KEPT = ("prometheus", "logs", "fr", "truth.json")
SKIPPED = {"lock", "queries.active"}


def _rewrites(folder: Path) -> list[tuple[str, str]]:
    environment = str(Path(sys.executable).resolve().parent.parent)
    return [(str(folder), RIG_PATH), (environment, PYTHON_PATH),
            (str(Path(sys.executable).parent.parent), PYTHON_PATH)]


def _rewrite_value(value: object, rewrites: list[tuple[str, str]]) -> object:
    if isinstance(value, str):
        for old, new in rewrites:
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {_rewrite_value(k, rewrites): _rewrite_value(v, rewrites)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_rewrite_value(v, rewrites) for v in value)
    return value


def _content(path: Path, relative: Path, rewrites: list[tuple[str, str]]) -> bytes:
    data = path.read_bytes()
    if relative.parts[0] == "fr":
        # the rig's own dumps, plain data: safe to load here, rewritten and written back
        return pickle.dumps(_rewrite_value(pickle.loads(data), rewrites))
    if relative.parts[0] in ("logs",) or relative.name == "truth.json":
        text = data.decode("utf-8", "surrogateescape")
        for old, new in rewrites:
            text = text.replace(old, new)
        return text.encode("utf-8", "surrogateescape")
    return data


def record(folder: Path, destination: Path) -> Path:
    """Write ``destination/incident.tar.gz`` and ``truth.json`` from the rig's ``folder``."""
    destination.mkdir(parents=True, exist_ok=True)
    rewrites = _rewrites(folder)
    archive = destination / "incident.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=9) as tar:
        for top in KEPT:
            root = folder / top
            paths = [root] if root.is_file() else sorted(root.rglob("*"))
            for path in paths:
                if not path.is_file() or path.name in SKIPPED:
                    continue
                relative = path.relative_to(folder)
                data = _content(path, relative, rewrites)
                info = tarfile.TarInfo(str(relative))
                info.size, info.mtime, info.mode = len(data), path.stat().st_mtime, 0o644
                tar.addfile(info, io.BytesIO(data))
    (destination / "truth.json").write_bytes(
        _content(folder / "truth.json", Path("truth.json"), rewrites))
    return archive

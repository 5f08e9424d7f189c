"""Where torchrun's agents put a rank's log files: the ``torchrun:DIR`` preset.

Each agent (one a node) writes under its own ``--log-dir`` (data-contracts §3.5 and §7)::

    <log-dir>/<rdzv_id>_<random>/attempt_<K>/<local_rank>/stderr.log and stdout.log

``K`` counts the agent's restarts; a new run of the job in the same log dir makes another
``<rdzv_id>_<random>`` folder. ``DIR`` may be:

- a folder holding every node's log dir, each named by its host (the full or the short
  name; on Kubernetes, where each pod writes its own tree, the rank's pod, looked for first)
  or by its node rank (``node3``, ``node-3``, ``node_3`` or ``3``);
- one node's own log dir, or a run or an attempt folder in it. Its node's ranks are found
  in it, the other nodes' in the folders beside it named the same way (given ``logs/node0``,
  node 1's ranks are found in ``logs/node1``). A folder whose name names no node serves a
  job of one node only.

The node rank and the local rank are the rank map's (torchrun's default order: node rank =
rank // nproc_per_node, local rank = rank % nproc_per_node).

A rank's files are those of its node's newest run folder (by its files' modification
time): every attempt in it, up to the ``MAX_ATTEMPTS`` newest, the newest attempt first,
stderr before stdout within one. ``ranktop.tui.logs.attempts`` reads them in turn.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from ..core.outside_file import modified
from .attempts import attempt_number

STREAMS = ("stderr", "stdout")
MAX_ATTEMPTS = 4  # a job that restarted more often shows its newest attempts only
NODE_RANK_FOLDERS = ("node{n}", "node-{n}", "node_{n}", "{n}")
_NODE_RANK_FOLDER = re.compile(r"(?:node[-_]?)?\d{1,9}")
_ATTEMPT_FOLDER = re.compile(r"attempt_\d{1,9}")
# Of a folder's subfolders, those looked into to tell a node's log dir (run folders in
# it) from a folder of node folders: a rank whose files are not found costs no more.
LOOKED_AT = 16


@dataclass(frozen=True)
class TreeFiles:
    """A rank's files, where they were looked for, and why none was found."""

    paths: list[Path]
    tried: list[str] = field(default_factory=list)  # the node folders looked in
    why: str = ""


def tree_files(directory: str, host_folders: Sequence[str], node_rank: int, local_rank: int,
               hosts: Sequence[str] = ()) -> TreeFiles:
    """One rank's files under ``directory`` (see the module docstring).

    ``host_folders``: glob patterns (escaped) that name the rank's node folder by host or
    pod, the likeliest first. ``hosts``: every host of the job, to tell a folder named
    after another node from one named after none.
    """
    root = Path(os.path.expanduser(directory))
    if not root.is_dir():
        return TreeFiles([], [str(root)], "no such folder")
    among = _among_nodes(root, host_folders, node_rank, local_rank)  # the likeliest: first
    if among.paths:
        return among
    node_dir, run = _levels(root)
    if node_dir is None:
        return among
    if _names_node(node_dir.name, host_folders, node_rank):
        return _in_node(node_dir, local_rank, run)
    if _names_a_node(node_dir.name, hosts):
        return _among_nodes(node_dir.parent, host_folders, node_rank, local_rank)
    if node_rank == 0 and len(hosts) <= 1:
        return _in_node(node_dir, local_rank, run)
    runs = sum(1 for folder in _subfolders(node_dir) if _has_attempts(folder))
    return TreeFiles([], [str(node_dir)],
                     f"{node_dir.name} is a --log-dir whose name names no node ({runs} run "
                     "folder(s) in it, none saying its node): give each node's agent its own "
                     "--log-dir named by host or node rank (node0, node1, ...) and the "
                     "folder that holds them")


def _levels(root: Path) -> tuple[Path | None, Path | None]:
    """The node log dir ``root`` is or is in, and the run folder it names; (None, None)
    when it is none of them (a folder of node folders)."""
    if _ATTEMPT_FOLDER.fullmatch(root.name):
        return root.parent.parent, root.parent
    if _has_attempts(root):
        return root.parent, root
    if any(_has_attempts(folder) for folder in _subfolders(root)[:LOOKED_AT]):
        return root, None
    return None, None


def _subfolders(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(entry.path) for entry in entries if entry.is_dir())
    except OSError:
        return []


def _has_attempts(folder: Path) -> bool:
    """Whether ``folder`` is a run folder: it holds an ``attempt_<K>`` folder."""
    try:
        with os.scandir(folder) as entries:
            return any(_ATTEMPT_FOLDER.fullmatch(entry.name) and entry.is_dir()
                       for entry in entries)
    except OSError:
        return False


def _node_rank_folders(node_rank: int) -> list[str]:
    """The names of the node's folder by its node rank; none for a rank of no known node
    (node rank -1, which "node-1" must not be taken for)."""
    return [name.format(n=node_rank) for name in NODE_RANK_FOLDERS] if node_rank >= 0 else []


def _names_node(name: str, host_folders: Sequence[str], node_rank: int) -> bool:
    """Whether a folder's name is the rank's node's."""
    return (any(fnmatchcase(name, pattern) for pattern in host_folders)
            or name in _node_rank_folders(node_rank))


def _names_a_node(name: str, hosts: Sequence[str]) -> bool:
    """Whether a folder's name is some node's of the job (by node rank or host)."""
    if _NODE_RANK_FOLDER.fullmatch(name):
        return True
    short = name.split(".", 1)[0]
    return any(name == host or short == host.split(".", 1)[0] for host in hosts)


def _among_nodes(parent: Path, host_folders: Sequence[str], node_rank: int,
                 local_rank: int) -> TreeFiles:
    """The rank's files in the first of its node's folders in ``parent`` that has any."""
    escaped = glob.escape(str(parent))
    names = list(dict.fromkeys([*host_folders, *_node_rank_folders(node_rank)]))
    for name in names:
        paths = _newest_run(_files(f"{escaped}/{name}/*", local_rank))
        if paths:
            return TreeFiles(paths)
    tried = [os.path.join(str(parent), name) for name in names]
    return TreeFiles([], tried, f"no {local_rank}/stderr.log or stdout.log under */attempt_*/")


def _in_node(node_dir: Path, local_rank: int, run: Path | None) -> TreeFiles:
    """The rank's files in one node's log dir (in ``run`` only, when given)."""
    runs = glob.escape(str(run if run is not None else node_dir)) + ("" if run else "/*")
    paths = _newest_run(_files(runs, local_rank))
    if paths:
        return TreeFiles(paths)
    return TreeFiles([], [str(run or node_dir)],
                     f"no {local_rank}/stderr.log or stdout.log under attempt_*/")


def _files(runs: str, local_rank: int) -> list[Path]:
    """The rank's log files in every attempt of the run folders ``runs`` matches."""
    return [Path(match) for stream in STREAMS
            for match in glob.glob(f"{runs}/attempt_*/{local_rank}/{stream}.log")
            if os.path.isfile(match)]


def _newest_run(paths: list[Path]) -> list[Path]:
    """The files of the newest run folder's newest attempts: the newest attempt first,
    stderr before stdout."""
    if not paths:
        return []
    runs: dict[Path, list[Path]] = {}
    for path in paths:
        runs.setdefault(path.parents[2], []).append(path)
    newest = max(runs.values(), key=lambda files: max(modified(path) for path in files))
    attempts = {path: attempt_number(path) or 0 for path in newest}  # each is in one
    kept = sorted(set(attempts.values()), reverse=True)[:MAX_ATTEMPTS]
    return sorted((path for path in newest if attempts[path] in kept),
                  key=lambda path: (-attempts[path], STREAMS.index(path.stem)))

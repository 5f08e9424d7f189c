"""Finding one rank's log files from a pattern or a preset.

A spec is either a raw pattern or ``preset:ARGUMENT``.

A raw pattern is a path with shell globs (``*``, ``?``, ``[...]``, ``**``) and the
placeholders ``{rank}`` (global rank), ``{local_rank}``, ``{node_rank}``, ``{host}`` (as
ranktop knows it), ``{short_host}`` (cut at the first '.'), and on Kubernetes ``{node}`` (the
node, the same as ``{host}``) and ``{pod}`` (the rank's pod; its host where no pod is known);
format specs work, e.g.
``{rank:05d}``, and ``{{``/``}}`` are literal braces. Example: ``/logs/{host}/rank{rank}.log``.
A pattern that starts with a word and a colon is read as a preset, so write a relative path
that does as ``./word:...``.

The presets (``PRESETS``):

- ``torchrun:DIR``: the trees of torchrun's ``--log-dir``, ``*/attempt_*/{local_rank}/``
  ``stderr.log`` and ``stdout.log``: DIR holds every node's log dir (named by host, pod or
  node rank), or is one node's own log dir, the others found beside it; every attempt of
  the newest run, read in turn (see ``ranktop.tui.logs.torchrun_tree``). The agent's
  console (``--tee``, its lines prefixed ``[default<local_rank>]:``) is a raw pattern that
  names it per node, e.g. ``/logs/console-{node_rank}.log``: each rank's lines are split out.
  Hang triage also reads the agents' "failed (exitcode: …)" lines from a console beside
  each node folder, ``<node folder>.console`` (``ranktop.tui.logs.agent_console``).
- ``nccl:PATTERN``: files written through ``NCCL_DEBUG_FILE``, where ``%h`` is the short host,
  ``%p`` a pid and ``%%`` a literal ``%``. A file is the rank's only on evidence: its NCCL init
  line or its own ``[rankN]`` labels name the rank, or its host and CUDA device are the
  rank's; see ``ranktop.tui.logs.nccl_files``, which also weighs every file of the job at
  once (``RankLogs`` does). When several qualify (a restarted job writes one file per pid),
  the newest is kept.
- ``slurm:PATTERN``: Slurm ``--output``/``--error`` patterns: ``%t`` global rank, ``%N`` short
  host, ``%n`` node rank, ``%j %J %s %A %a %b %u %x`` any value, ``%%`` a literal ``%``, zero
  padding such as ``%4t``; a leading backslash turns replacement off.

The result holds existing regular files only, newest first (then by path), so the first one
is the likeliest to be the running job's. A spec that cannot be understood raises ValueError.
What a raw or Slurm pattern matches that is no regular file (a FIFO, a device, a folder, a
symbolic link loop) is left out, never opened; ``not_logs`` says what those were.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from ..core.model import Rank, RankMap
from ..core.outside_file import modified
from .nccl_files import Job, NcclFiles, Sniffs, nccl_glob
from .torchrun_tree import TreeFiles, tree_files

PRESETS: dict[str, str] = {
    "torchrun": "DIR/{host or node rank}/*/attempt_*/{local_rank}/stderr.log and stdout.log "
                "(a pod's own tree: DIR/{pod}/...; DIR may be one node's --log-dir), "
                "every attempt",
    "nccl": "PATTERN with %h = short host, %p = any pid; the file whose NCCL init line names "
            "the rank (else whose [cudaDev] is the local rank)",
    "slurm": "PATTERN with %t = rank, %N = short host, %n = node rank, "
             "%j %J %s %A %a %b %u %x = any, %% = %",
}

_PRESET = re.compile(r"^([A-Za-z]\w*):(.*)$", re.DOTALL)
_SLURM = re.compile(r"%(\d*)([A-Za-z%])")
_SLURM_ANY = set("jJsAabux")
MAX_NOT_LOGS = 100  # of a pattern's matches, looked at to say why none is a log
MAX_TRIED = 8  # of the folders the torchrun preset looked in, said


def find_logs(spec: str, rank: Rank, node_rank: int, local_rank: int,
              world_size: int, hosts: Sequence[str] = ()) -> list[Path]:
    """The log files of one rank that ``spec`` names (see the module docstring);
    ``hosts``: every host of the job, for the torchrun preset."""
    name, argument = _parse(spec)
    if name == "":
        return _newest_first(_glob(_fill(argument, rank, node_rank, local_rank)))
    if name == "torchrun":
        return _torchrun(argument, rank, node_rank, local_rank, hosts).paths
    if name == "nccl":
        return _nccl(argument, rank, local_rank, world_size)
    return _newest_first(_glob(_slurm_pattern(argument, rank, node_rank)))


def nccl_files(spec: str, rank_map: RankMap, sniffs: Sniffs | None = None,
               rank: Rank | None = None) -> NcclFiles | None:
    """For an ``nccl:`` spec, its files weighed against the whole rank map at once: those
    of ``rank``'s host where the pattern names the host (``%h``), else every host's. None
    for a spec of another kind."""
    name, argument = _parse(spec)
    if name != "nccl":
        return None
    host = _short_host(rank.host) if rank is not None else "*"
    return NcclFiles(_glob(nccl_glob(argument, host)), Job.of(rank_map), sniffs)


def looked_in(spec: str, rank: Rank, node_rank: int, local_rank: int,
              hosts: Sequence[str] = ()) -> str:
    """Where the torchrun preset looked for a rank's files and why none was there; "" for
    the other kinds of spec, or when it found some."""
    name, argument = _parse(spec)
    if name != "torchrun":
        return ""
    found = _torchrun(argument, rank, node_rank, local_rank, hosts)
    if found.paths:
        return ""
    tried = found.tried[:MAX_TRIED]
    parents = {os.path.dirname(path) for path in tried}
    if len(tried) > 1 and len(parents) == 1:  # the node folders of one parent, by name
        names = ", ".join(os.path.basename(path) for path in tried)
        shown = f"{parents.pop()} for {names}"
    else:
        shown = ", ".join(tried)
    more = " …" if len(found.tried) > MAX_TRIED else ""
    return f"looked in {shown}{more}: {found.why}"


def not_logs(spec: str, rank: Rank, node_rank: int, local_rank: int) -> list[tuple[Path, str]]:
    """What a raw or Slurm pattern matches for one rank that is no regular file, each with
    what it is instead ("a FIFO", "a symbolic link loop", ...); [] for the presets that
    look in trees (they only ever match regular files by name)."""
    name, argument = _parse(spec)
    if name == "":
        pattern = _fill(argument, rank, node_rank, local_rank)
    elif name == "slurm":
        pattern = _slurm_pattern(argument, rank, node_rank)
    else:
        return []
    matches = sorted(glob.glob(os.path.expanduser(pattern), recursive=True))
    found = [(Path(match), _what_is(match)) for match in matches[:MAX_NOT_LOGS]]
    return [(path, what) for path, what in found if what]


def _what_is(path: str) -> str:
    """What ``path`` is when it is no regular file; "" when it is one."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link loop"
        return f"unreadable: {error.strerror or error}"
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
    return next((what for test, what in kinds if test(mode)), "")


def check_spec(spec: str) -> None:
    """Raise the ValueError ``find_logs`` would raise for ``spec`` whatever the rank, without
    looking at a single file (for the configuration check at start)."""
    name, argument = _parse(spec)
    sample = Rank(rank=0, host="host", gpu=0, node=0)
    if name == "":
        _fill(argument, sample, 0, 0)
    elif name == "slurm":
        _slurm_pattern(argument, sample, 0)


def preset_name(spec: str) -> str:
    """The preset a spec names ("torchrun", ...), "" for a raw pattern or a spec that
    cannot be understood."""
    try:
        return _parse(spec)[0]
    except ValueError:
        return ""


def preset_argument(spec: str, name: str) -> str:
    """The argument of a spec that names preset ``name`` (its DIR or PATTERN), else ""."""
    try:
        preset, argument = _parse(spec)
    except ValueError:
        return ""
    return argument if preset == name else ""


def _parse(spec: str) -> tuple[str, str]:
    """(preset name, its argument), or ("", pattern) for a raw pattern."""
    spec = spec.strip()
    if not spec:
        raise ValueError("empty log spec: give a path pattern or preset:PATH")
    preset = _PRESET.match(spec)
    if preset is None:
        return "", spec
    name, argument = preset.group(1), preset.group(2).strip()
    if name not in PRESETS:
        known = ", ".join(sorted(PRESETS))
        raise ValueError(f"unknown log preset {name!r} (known: {known}); "
                         f"write a relative path that starts with 'word:' as ./word:...")
    if not argument:
        raise ValueError(f"log preset {name}: needs a path after the colon, "
                         f"e.g. {name}:/shared/logs")
    return name, argument


def _short_host(host: str) -> str:
    """A host name as NCCL and Slurm write it (up to the first '.'), escaped for glob."""
    return _safe(host.split(".", 1)[0])


def _safe(value: str) -> str:
    # Host names come from metric labels: never let one climb out of the directory or glob.
    return glob.escape(value.replace("/", "-").replace("%", "-"))


def _fill(pattern: str, rank: Rank, node_rank: int, local_rank: int) -> str:
    values = {"rank": rank.rank, "local_rank": local_rank, "node_rank": node_rank,
              "host": _safe(rank.host), "short_host": _short_host(rank.host),
              "node": _safe(rank.host), "pod": _safe(rank.pod or rank.host)}
    try:
        return pattern.format_map(values)
    except KeyError as missing:
        names = ", ".join("{" + name + "}" for name in values)
        raise ValueError(f"unknown placeholder {{{missing.args[0]}}} in log pattern "
                         f"{pattern!r} (known: {names})") from None
    except (ValueError, IndexError, AttributeError) as error:
        raise ValueError(f"bad log pattern {pattern!r}: {error} "
                         "(write literal braces as {{ and }})") from None


def _glob(pattern: str) -> list[Path]:
    matches = glob.glob(os.path.expanduser(pattern), recursive=True)
    return [Path(match) for match in matches if os.path.isfile(match)]


def _newest_first(paths: list[Path]) -> list[Path]:
    return sorted(paths, key=lambda path: (-modified(path), str(path)))


def _torchrun(directory: str, rank: Rank, node_rank: int, local_rank: int,
              hosts: Sequence[str]) -> TreeFiles:
    pods = [_safe(rank.pod)] if rank.pod else []
    folders = list(dict.fromkeys([*pods, *_host_dirs(rank.host)]))
    return tree_files(directory, folders, node_rank, local_rank, hosts)


def _host_dirs(host: str) -> list[str]:
    short = _short_host(host)
    names = [_safe(host), short, f"{short}.*"]
    return list(dict.fromkeys(names))


def _nccl(pattern: str, rank: Rank, local_rank: int, world_size: int) -> list[Path]:
    candidates = _glob(nccl_glob(pattern, _short_host(rank.host)))
    return NcclFiles(candidates, Job.one(rank, local_rank, world_size)).of(rank.rank)[0]


def _slurm_pattern(pattern: str, rank: Rank, node_rank: int) -> str:
    if pattern.startswith("\\"):
        return glob.escape(pattern[1:])
    return _SLURM.sub(lambda m: _slurm_field(m, rank, node_rank, pattern), pattern)


def _slurm_field(match: re.Match[str], rank: Rank, node_rank: int, pattern: str) -> str:
    width, letter = match.group(1), match.group(2)
    if width and int(width) > 10:
        raise ValueError(f"slurm pattern {pattern!r}: padding {width} is over Slurm's 10")
    pad = int(width or 0)
    if letter == "t":
        return str(rank.rank).zfill(pad)
    if letter == "n":
        return str(node_rank).zfill(pad)
    if letter == "N":
        return _short_host(rank.host)
    if letter == "%":
        return "%"
    if letter in _SLURM_ANY:
        return "*"
    raise ValueError(f"slurm pattern {pattern!r}: unknown field %{letter} "
                     "(known: %t %N %n %j %J %s %A %a %b %u %x %%)")

"""A dump's process groups: who is in each (``pg_config``), how far the rank got in each
(``pg_status``), under the names its entries use.

The three parts of a dump do not always name a group alike. Entries name it by
``process_group[0]`` (``('0', 'default_pg')``) and by ``pg_id``; ``pg_status`` is keyed by
``pg_id``; ``pg_config`` by the group's name, which in PyTorch 2.14's gloo dumps is ``''``
(``{'': {'name': '', 'desc': '', 'ranks': '[0, 1, 2, 3]'}}``). A ``pg_config`` group no entry
names is given the entries' name when the match is plain: the only group left on each side,
or the unnamed one and the entries' ``default_pg``. Ranks come as a list or as a string.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..core.hang.flight import Frontier, Group, RankDump
from .values import number, text

DEFAULT_DESC = "default_pg"
MAX_GROUPS = 10_000


def dump_groups(config: Any, named: Mapping[str, str]) -> dict[str, Group]:
    """``pg_config``'s groups by the names the entries use; ``named``: each group name the
    entries use, with its description (``process_group[1]``)."""
    groups = _configured(config)
    left = [name for name in groups if name not in named]
    unnamed = [name for name in named if name not in groups]
    for key, name in _pairs(left, unnamed, groups, named):
        group = groups.pop(key)
        groups[name] = Group(name, group.desc or named[name], group.ranks)
    for name, group in groups.items():
        if not group.desc and named.get(name):
            groups[name] = Group(name, named[name], group.ranks)
    return groups


def _pairs(left: list[str], unnamed: list[str], groups: Mapping[str, Group],
           named: Mapping[str, str]) -> list[tuple[str, str]]:
    """(pg_config key, the entries' name) for the groups that plainly are the same."""
    if len(left) == 1 and len(unnamed) == 1:
        return [(left[0], unnamed[0])]
    default = next((n for n in unnamed if named[n] == DEFAULT_DESC), None)
    key = next((k for k in left if k == "" or groups[k].desc == DEFAULT_DESC), None)
    return [(key, default)] if default is not None and key is not None else []


def _configured(config: Any) -> dict[str, Group]:
    groups: dict[str, Group] = {}
    if not isinstance(config, dict):
        return groups
    for key, info in list(config.items())[:MAX_GROUPS]:
        if isinstance(info, dict):
            name, desc, ranks = info.get("name", key), info.get("desc", ""), info.get("ranks")
        else:
            name, desc, ranks = key, "", info
        groups[text(name)] = Group(text(name), text(desc), _ranks(ranks))
    return groups


def _ranks(ranks: Any) -> tuple[int, ...]:
    if isinstance(ranks, str):
        return _ranks_in(ranks[:2_000_000])
    if isinstance(ranks, list | tuple):
        return tuple(sorted({r for r in ranks if isinstance(r, int) and 0 <= r < 1 << 31}))
    return ()


@functools.lru_cache(maxsize=16)
def _ranks_in(listed: str) -> tuple[int, ...]:
    """A group's ranks as a dump lists them ("[0, 1, ...]"): every rank of a job names the
    same groups, and the default group of 100,000 ranks takes a tenth of a second to read,
    so each list is read once."""
    return tuple(sorted({int(n) for n in re.findall(r"\d{1,9}", listed)}))


def frontiers(status: Any, pg_ids: Mapping[str, str],
              known: Mapping[str, object]) -> dict[str, Frontier]:
    """``pg_status`` by group name: keyed by ``pg_id`` (``pg_ids`` gives each one's name) or
    by a name in ``known``. A negative number is PyTorch's "not known" (gloo leaves
    ``last_started_collective`` at -1): None, never "nothing started"."""
    found: dict[str, Frontier] = {}
    if not isinstance(status, dict):
        return found
    for key, values in list(status.items())[:MAX_GROUPS]:
        name = pg_ids.get(str(key), str(key) if str(key) in known else None)
        if name is None or not isinstance(values, dict):
            continue  # a group with no entry in the buffer: nothing to match it by
        seqs = (number(values.get(f"last_{k}_collective"))
                for k in ("enqueued", "started", "completed"))
        found[name] = Frontier(*(s if s is not None and s >= 0 else None for s in seqs))
    return found


def shared_groups(dump: RankDump, known: dict[Group, Group]) -> RankDump:
    """``dump`` holding the same Group objects as the dumps read before it: each rank's dump
    lists every group's ranks, which at 100,000 ranks is 3.6 MB a dump held once."""
    groups = {name: known.setdefault(group, group) for name, group in dump.groups.items()}
    return replace(dump, groups=groups)

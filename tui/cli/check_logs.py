"""`ranktop check-config`'s test of the log spec against the job's rank map: how many ranks
it finds a file for, one example, and the first rank it finds none for, with why.

The rank map is the one the Prometheus source learned; without a Prometheus, the rank-map
file or the Slurm node list of the configuration, when one is given."""

from __future__ import annotations

from typing import TextIO

from ..core import ranks
from ..core.model import RankMap
from ..core.text import plain
from ..logs.rank_logs import RankLogs
from ..settings.config import Settings


def configured_rank_map(settings: Settings) -> tuple[RankMap | None, str]:
    """The rank map the configuration gives without a Prometheus, or None and why not."""
    given = settings.ranks
    try:
        if given.rank_map_file is not None:
            return ranks.from_file(given.rank_map_file), ""
        if given.slurm_nodelist:
            return ranks.from_slurm(given.slurm_nodelist, given.gpus_per_node), ""
    except ranks.RankMapError as error:
        return None, str(error)
    return None, "no rank map to test it against (--rank-map FILE, or a Prometheus)"


def check_logs(spec: str, rank_map: RankMap | None, out: TextIO, why: str = "") -> bool:
    """Print what ``spec`` finds for each rank of ``rank_map``; whether every rank found a
    file (True as well when no log is configured: there is nothing to find)."""
    print("\nlogs", file=out)
    if not spec:
        print("  no log configured (--logs PATTERN): hang triage reads no rank's log", file=out)
        return True
    print(f"  spec           {plain(spec)}", file=out)
    if rank_map is None or not len(rank_map):
        print(f"  not tested: {plain(why or 'the job has no ranks yet')}", file=out)
        return False
    logs = RankLogs(spec)
    found = [logs.files(rank_map, rank) for rank in range(len(rank_map))]
    matched = [rank for rank, (paths, _) in enumerate(found) if paths]
    total = len(rank_map)
    print(f"  a file for     {len(matched):,} of {total:,} ranks", file=out)
    if matched:
        first = matched[0]
        print(f"  e.g.           rank {first}: {plain(str(found[first][0][0]), 400)}", file=out)
    missing = next((rank for rank, (paths, _) in enumerate(found) if not paths), None)
    if missing is None:
        return True
    print(f"  none for       {total - len(matched):,} ranks; the first: "
          f"{plain(rank_map.ranks[missing].title)}: {plain(found[missing][1], 600)}", file=out)
    return False

"""Why Prometheus cannot scrape a rank that stopped reporting, from its targets API
(``/api/v1/targets``): a process that is gone refuses the connection, one that is frozen
(``SIGSTOP``, a deadlock that holds its metrics thread) accepts it and never answers, so
the scrape times out. The metrics cannot tell the two apart: both series vanish.

Only the live scrape is known: the API keeps no past, so a past moment says no more than
"not reporting". Asked only while some rank is down (when one goes down, then now and
then): which target each down rank's series came from (its ``instance``, and its scrape
job, ``job``), then the targets of those scrape jobs alone (``scrapePool``: a cluster's
Prometheus may hold a hundred thousand targets), and which of them are down.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from ...core import ranks
from ...core.detect.down import SCRAPE_REFUSED, SCRAPE_TIMING_OUT
from ...core.detect.lookback import SEEN_SECONDS
from ...core.text import plain
from ..bounded_body import ByteBudget
from . import promql
from .client import PromClient, QueryError

ERROR_CHARS = 120  # of another error, said as Prometheus gives it
ASK_EVERY_SECONDS = 15.0  # while ranks stay down (at once when another goes down)
TARGETS_BYTES = 32 * 1024 * 1024  # the targets of a large job's Prometheus; past it, unsaid
INSTANCE = "instance"
SCRAPE_JOB = "job"  # the scrape job a series came from: the targets API's scrapePool
MAX_POOLS = 3  # scrape jobs asked one by one; past it, every target at once


def scrape_words(last_error: str) -> str:
    """What a failing scrape's error says of the process behind it."""
    error = last_error.lower()
    if "deadline exceeded" in error or "timeout" in error or "timed out" in error:
        return SCRAPE_TIMING_OUT
    if "connection refused" in error:
        return SCRAPE_REFUSED
    return f"scrape failing: {plain(last_error, ERROR_CHARS)}" if last_error else ""


def scrape_errors(client: PromClient, down: Collection[int], step_metric: str, job: str,
                  rank_label: str) -> dict[int, str]:
    """The words for each rank of ``down`` whose target Prometheus fails to scrape (see
    ``scrape_words``); empty where the backend has no targets API (a store, a front) or the
    ranks' series carry no ``instance``."""
    if not down:
        return {}
    try:
        instances = _instances(client, step_metric, job, rank_label)
        pools = {instances[rank][1] for rank in down if rank in instances}
        failing: dict[str, str] = {}
        for pool in sorted(pools)[:MAX_POOLS] if len(pools) <= MAX_POOLS else ("",):
            failing |= _down_targets(client, pool)
    except QueryError:
        return {}
    found = {}
    for rank in down:
        words = scrape_words(failing.get(instances.get(rank, ("", ""))[0], ""))
        if words:
            found[rank] = words
    return found


def _down_targets(client: PromClient, pool: str) -> dict[str, str]:
    """Each active target of scrape job ``pool`` ("": of any) that is down, by its
    ``instance``: its last scrape's error."""
    data = client.targets(ByteBudget(TARGETS_BYTES), pool)
    active = data.get("activeTargets") if isinstance(data, Mapping) else None
    found: dict[str, str] = {}
    for target in active if isinstance(active, list) else ():
        if not isinstance(target, Mapping) or target.get("health") != "down":
            continue
        labels = target.get("labels")
        instance = labels.get(INSTANCE) if isinstance(labels, Mapping) else None
        error = target.get("lastError")
        if isinstance(instance, str) and isinstance(error, str):
            found[instance] = error
    return found


def _instances(client: PromClient, step_metric: str, job: str, rank_label: str
               ) -> dict[int, tuple[str, str]]:
    """The target (``instance``) each rank's step series last came from, and its scrape
    job (``job``)."""
    label = promql.label_name(rank_label)
    answer = client.query(f"group by ({label}, {INSTANCE}, {SCRAPE_JOB}) (last_over_time("
                          f"{promql.metric_name(step_metric)}{job}[{SEEN_SECONDS:.0f}s]))")
    found: dict[int, tuple[str, str]] = {}
    for labels, _ in answer.pairs():
        rank = ranks.rank_number(labels.get(rank_label, ""))
        if rank is not None and labels.get(INSTANCE):
            found[rank] = (labels[INSTANCE], labels.get(SCRAPE_JOB, ""))
    return found

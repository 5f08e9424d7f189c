"""Test packages whose tests share real backends (Prometheus, VictoriaMetrics, simulators)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# Tests that share backends go to one xdist worker in one run (--dist loadgroup), so that
# each backend starts once and stops when its tests are done, instead of starting on every
# worker and scraping until the whole suite ends. Each integration and fault module starts
# its own (module-scoped): a group per module, so that the modules spread over the workers
# instead of queueing on one for minutes (the fault modules together took longer than the
# rest of the suite on the other workers).
# A console's first poll waits this long for a late start's past before it is shown without
# verdicts (the engine's pipeline). The tests wait however long the read takes, whatever the
# load: what a screen shows must not depend on the machine's speed. Engine processes the
# tests start inherit it; the tests of the behind path give their pipeline a wait of 0.
os.environ["RANKTOP_CATCH_UP_WAIT"] = "inf"
SHARED_BY_MODULE = ("integration", "faults")


def shared_group(path: Path) -> str | None:
    """The xdist group of the test file at ``path``: its own when its tests share
    backends, else None."""
    parts = path.relative_to(HERE).parts
    if parts[0] in SHARED_BY_MODULE:
        return "/".join(parts)
    return None


# Where the long tests are, in the order they start: those against real backends (their
# waits on scrapes overlap the other workers' work), then the consoles driven by a Pilot.
# The short unit tests come last and even out the workers' last minutes, instead of one
# long test running alone at the end of the run.
LONG_FIRST = ("integration", "faults", "tui/app", "tui/screens", "tui/bundle", "tui/engine")


def started_first(path: Path) -> int:
    """Where the test file at ``path`` starts in the run: its folder's place in
    LONG_FIRST, the others after them (in the order collected)."""
    file = path.relative_to(HERE).as_posix()
    return next((place for place, folder in enumerate(LONG_FIRST)
                 if file.startswith(folder + "/")), len(LONG_FIRST))


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: started_first(item.path))  # stable: a module stays whole
    for item in items:
        group = shared_group(item.path)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker more than the machine has cores. The tests against real
    backends spend much of their time waiting on scrapes; the spare worker runs others
    meanwhile (on 2 cores: 3 workers, 6.5 min against 8). More than one spare slowed the
    Pilot tests enough that polls meant to fall between scrapes no longer did."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist reads it
    return len(os.sched_getaffinity(0)) + 1

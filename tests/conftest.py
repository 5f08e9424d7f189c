"""Test packages whose tests share real backends (Prometheus, VictoriaMetrics, simulators)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# Each starts its backends once (package- or module-scoped fixtures): its tests go to one
# xdist worker in one run (--dist loadgroup), so each backend starts once and stops when its
# package or module is done, instead of starting on every worker and scraping until the
# whole suite ends.
SHARED_BACKENDS = ("faults", "integration")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        package = item.path.relative_to(HERE).parts[0]
        if package in SHARED_BACKENDS:
            item.add_marker(pytest.mark.xdist_group(package))

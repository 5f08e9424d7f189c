"""Which tests share an xdist worker: those of one module whose backends are module-scoped;
the others go anywhere. And which start first: the long ones."""

from __future__ import annotations

from tests.conftest import HERE, shared_group, started_first


def test_each_fault_module_is_a_group_of_its_own():
    secrets = shared_group(HERE / "faults" / "test_secrets.py")
    console = shared_group(HERE / "faults" / "test_console_faults.py")
    assert (secrets, console) == ("faults/test_secrets.py", "faults/test_console_faults.py")


def test_each_integration_module_is_a_group_of_its_own():
    past = shared_group(HERE / "integration" / "test_past_moments.py")
    death = shared_group(HERE / "integration" / "test_rank_death.py")
    assert past == "integration/test_past_moments.py"
    assert death == "integration/test_rank_death.py"


def test_the_other_tests_are_in_no_group():
    assert shared_group(HERE / "tui" / "test_moments.py") is None
    assert shared_group(HERE / "test_readme.py") is None


def test_auto_runs_a_worker_more_than_the_cores_unless_told_how_many(monkeypatch):
    from tests.conftest import pytest_xdist_auto_num_workers

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: {0, 1})
    assert pytest_xdist_auto_num_workers(None) == 3
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert pytest_xdist_auto_num_workers(None) is None  # xdist's own hook reads it


def test_the_long_tests_start_first_and_the_unit_tests_last():
    order = [started_first(HERE / path) for path in (
        "integration/test_past_moments.py", "faults/test_secrets.py",
        "tui/app/test_moments.py", "tui/core/test_model.py", "test_readme.py")]
    assert order == sorted(order) and order[0] < order[2] < order[3] == order[4]

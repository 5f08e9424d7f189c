"""Which tests share an xdist worker: those of a package whose backends are package-scoped,
and those of one module whose backends are module-scoped; the others go anywhere."""

from __future__ import annotations

from tests.conftest import HERE, shared_group


def test_the_fault_tests_share_one_group_for_their_package_wide_prometheus():
    groups = {shared_group(HERE / "faults" / name)
              for name in ("test_secrets.py", "test_console_faults.py")}
    assert groups == {"faults"}


def test_each_integration_module_is_a_group_of_its_own():
    past = shared_group(HERE / "integration" / "test_past_moments.py")
    death = shared_group(HERE / "integration" / "test_rank_death.py")
    assert past == "integration/test_past_moments.py"
    assert death == "integration/test_rank_death.py"


def test_the_other_tests_are_in_no_group():
    assert shared_group(HERE / "tui" / "test_moments.py") is None
    assert shared_group(HERE / "test_readme.py") is None

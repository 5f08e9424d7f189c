"""The jobs list's verdicts: worst first, and a healthy job never above an unhealthy one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.fleet import JobFacts, Limits, Verdict, judge, ranked, unhealthy

NOW = 1_000_000.0


def healthy(name: str, goodput: float | None = 0.99, **changes) -> JobFacts:
    usual = dict(ranks_up=64, ranks_expected=64, steps=100.0, hottest_c=60.0, straggler=1.01)
    return JobFacts(name, goodput=goodput, **{**usual, **changes})


def test_the_worst_comes_first_in_the_order_the_on_call_looks():
    jobs = [healthy("fine"),
            healthy("warned", alerts={"warning": 2}),
            healthy("paged", alerts={"critical": 1}),
            healthy("lost-one", ranks_up=63),
            healthy("stalled", steps=0.0),
            healthy("hot", hottest_c=91.0)]
    rows = ranked(jobs, NOW)
    names = [row.facts.name for row in rows]
    assert names[:3] == ["stalled", "lost-one", "paged"]
    assert set(names[3:5]) == {"warned", "hot"}
    assert [row.verdict for row in rows] == sorted(row.verdict for row in rows)
    assert rows[-1].facts.name == "fine" and rows[-1].healthy
    assert unhealthy(rows) == 5


def test_each_verdict_says_its_worst_fault_in_words():
    said = {name: judge(facts, NOW).worst for name, facts in {
        "lost": healthy("lost", ranks_up=61),
        "xid": healthy("xid", xid_gpus=1, ecc_gpus=2),
        "hot": healthy("hot", hottest_c=88.4),
        "slow": healthy("slow", straggler=1.31),
        "paged": healthy("paged", alerts={"critical": 3}),
    }.items()}
    assert said == {"lost": "3 ranks missing", "xid": "XID on 1 GPU", "hot": "GPU at 88 °C",
                    "slow": "straggler ×1.31", "paged": "3 critical alerts"}


def test_a_stall_says_how_long_since_the_last_step():
    # the window that last saw a step closed 600 s ago: the step came a window before that
    row = judge(healthy("s", steps=0.0, advanced=NOW - 600), NOW, Limits(progress_seconds=120))
    assert row.verdict is Verdict.STALLED
    assert row.stalled_seconds == 720 and row.worst == "stalled 12 min"
    unknown = judge(healthy("s", steps=0.0), NOW)
    assert unknown.worst == "stalled ≥ 2 min"


def test_what_was_not_answered_is_not_a_fault():
    assert judge(JobFacts("unknown"), NOW).healthy
    # a counter younger than the window has not had the time to step
    assert judge(healthy("young", steps=0.0, window_full=False), NOW).healthy
    assert judge(healthy("cool", hottest_c=float("nan")), NOW).healthy


def test_among_equals_the_lower_goodput_comes_first():
    rows = ranked([healthy("a", 0.95), healthy("b", 0.4), healthy("c", None)], NOW)
    assert [row.facts.name for row in rows] == ["b", "a", "c"]


_facts = st.builds(
    JobFacts,
    name=st.text(min_size=1, max_size=8),
    ranks_up=st.none() | st.integers(0, 100),
    ranks_expected=st.none() | st.integers(0, 100),
    steps=st.none() | st.floats(0, 50),
    window_full=st.booleans(),
    goodput=st.none() | st.floats(0, 1),
    hottest_c=st.none() | st.floats(20, 110),
    xid_gpus=st.integers(0, 3),
    straggler=st.none() | st.floats(0.5, 2),
    alerts=st.dictionaries(st.sampled_from(["critical", "warning", "info"]), st.integers(0, 3)),
)


@given(st.lists(_facts, max_size=20))
def test_a_healthy_job_is_never_above_an_unhealthy_one(jobs):
    rows = ranked(jobs, NOW)
    first_healthy = next((i for i, row in enumerate(rows) if row.healthy), len(rows))
    assert not any(row.healthy for row in rows[:first_healthy])
    assert all(row.healthy for row in rows[first_healthy:])
    assert [row.verdict for row in rows] == sorted(row.verdict for row in rows)

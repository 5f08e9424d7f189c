"""PromQL built by ranktop: label values escaped, one rank's query, the ALERTS for a rank."""

from __future__ import annotations

import json
import re

import pytest
from ranktop.tui.core.config_values import MetricQuery
from ranktop.tui.core.model import Rank
from ranktop.tui.sources.prometheus import promql

HOSTILE = [
    'gpu-node-000",Hostname=~".+',
    'a"} or up{x="',
    "back\\slash\\",
    "two\nlines",
    'all " three \\ at\nonce\\"',
    "",
]
# One matcher: a label name, an operator, a double-quoted string in PromQL's escapes.
MATCHER = re.compile(r'([A-Za-z_]\w*)(=~|!~|!=|=)"((?:[^"\\\n]|\\.)*)"')


def matchers(selector: str) -> list[tuple[str, str, str]]:
    """The (name, operator, value) matchers of ``{...}``, read as Prometheus's lexer would;
    an AssertionError if anything is left over."""
    assert selector.startswith("{") and selector.endswith("}"), selector
    body, found, at = selector[1:-1], [], 0
    while at < len(body):
        match = MATCHER.match(body, at)
        assert match is not None, f"not a matcher at {body[at:]!r}"
        name, operator, literal = match.groups()
        found.append((name, operator, json.loads(f'"{literal}"')))
        at = match.end()
        if at < len(body):
            assert body[at] == ",", f"junk after a matcher: {body[at:]!r}"
            at += 1
    return found


@pytest.mark.parametrize("value", HOSTILE)
def test_a_quoted_value_reads_back_as_itself(value):
    quoted = promql.quote(value)
    assert quoted.startswith('"') and quoted.endswith('"')
    assert "\n" not in quoted
    assert json.loads(quoted) == value  # JSON strings escape \\, \" and \n as PromQL does


def test_the_three_escapes():
    assert promql.quote('a"b\\c\nd') == r'"a\"b\\c\nd"'


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_value_stays_one_matcher(value):
    selector = promql.selector({"Hostname": value, "gpu": "5"}, 'namespace="training"')
    assert matchers(selector) == [("Hostname", "=", value), ("gpu", "=", "5"),
                                  ("namespace", "=", "training")]


def test_selectors_of_dcgm_and_the_job():
    assert promql.dcgm_selector("") == "{}"
    assert promql.dcgm_selector('namespace="t"') == '{namespace="t"}'
    assert promql.job_selector("training_job", "") == "{}"
    assert matchers(promql.job_selector("training_job", 'llama"7b')) == [
        ("training_job", "=", 'llama"7b')]


SM = (MetricQuery("100 * DCGM_FI_PROF_SM_ACTIVE{dcgm}", "SM active"),
      MetricQuery("DCGM_FI_DEV_GPU_UTIL{dcgm}", "GPU utilisation"))
STEP = (MetricQuery("training_step_seconds{job}", "step"),)
JOB = {"training_job": "llama", "rank": "37"}


def test_one_rank_by_its_gpu_uuid_under_either_uuid_label():
    rank = Rank(rank=37, host="gpu-node-004", gpu=5, node=4, uuid="GPU-1")
    query = promql.rank_query(SM[:1], rank, 'namespace="t"', JOB)
    assert query == ('100 * DCGM_FI_PROF_SM_ACTIVE{UUID="GPU-1",namespace="t"} or '
                     '100 * DCGM_FI_PROF_SM_ACTIVE{uuid="GPU-1",namespace="t"}')


def test_one_rank_by_host_and_gpu_without_a_uuid():
    rank = Rank(rank=37, host="gpu-node-004", gpu=5, node=4)
    selectors = re.findall(r"\{[^}]*\}", promql.rank_query(SM[:1], rank, "", JOB))
    assert [matchers(s) for s in selectors] == [
        [("Hostname", "=", "gpu-node-004"), ("gpu", "=", "5")],
        [("hostname", "=", "gpu-node-004"), ("gpu", "=", "5")],
    ]


def test_one_ranks_job_series_and_a_metric_with_several_ways():
    rank = Rank(rank=37, host="gpu-node-004", gpu=5, node=4, uuid="GPU-1")
    assert promql.rank_query(STEP, rank, "", JOB).split(" or ")[0] == (
        'training_step_seconds{training_job="llama",rank="37"}')
    ways = promql.rank_query(SM, rank, "", JOB)
    assert ways.count(promql.WAY_LABEL) == 4 and ways.count(promql.JOIN) == 2


def test_a_hostile_host_stays_inside_its_matchers():
    rank = Rank(rank=3, host=HOSTILE[0], gpu=1, node=0)
    query = promql.rank_query(SM[:1], rank, "", JOB)
    for part in query.split(" or "):
        selector = part.removeprefix("100 * DCGM_FI_PROF_SM_ACTIVE")
        assert [name for name, _, _ in matchers(selector)] in (["Hostname", "gpu"],
                                                               ["hostname", "gpu"])


def test_the_alerts_of_a_rank_firing_or_pending():
    query = promql.alerts_query([{"Hostname": "h", "gpu": "5"}, {"rank": '3"'}])
    first, second = query.split(" or ")
    assert first == 'ALERTS{Hostname="h",gpu="5",alertstate=~"firing|pending"}'
    assert matchers(second.removeprefix("ALERTS")) == [
        ("rank", "=", '3"'), ("alertstate", "=~", "firing|pending")]


def test_candidates_join_on_every_uuid_label():
    assert promql.JOIN == "or on(UUID, uuid)"


def test_keep_leaves_only_the_labels_asked_for():
    kept = promql.keep("100 * DCGM_FI_PROF_SM_ACTIVE{}", ["rank", "UUID", "", "rank"])
    assert kept == "max by (rank, UUID) (100 * DCGM_FI_PROF_SM_ACTIVE{})"


def test_keep_leaves_alone_what_it_cannot_name():
    # a label Prometheus 3 allows under UTF-8 names: better every label than a broken query
    assert promql.keep("up", ["rank", "k8s.pod"]) == "up"
    assert promql.keep("up", []) == "up"


def test_freshness_of_a_metric_under_either_of_its_names_is_one_expression():
    assert promql.freshness_query("up", "{}") == "timestamp(up{})"
    both = promql.freshness_query(promql.DCGM_PROBE_METRICS, '{a="b"}')
    assert both == ('(timestamp(DCGM_FI_DEV_GPU_TEMP{a="b"}) or '
                    'timestamp(DCGM_FI_DEV_GPU_TEMP_CELSIUS{a="b"}))')
    # it stays one operand where a range or a comparison follows it
    assert promql.with_freshness("x", promql.DCGM_PROBE_METRICS, "{}", ["gpu"], 60).count(
        "max by (gpu) ((timestamp(") == 1

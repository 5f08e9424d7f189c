"""Who else is on a node: the job's own GPUs left out (by UUID, else by place), the rest
grouped by who uses them, and the line a drain shows in each case."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.advice.action import DRAIN, RESET, Action
from ranktop.tui.core.advice.tenants import (
    Gpu,
    NodeTenants,
    Tenant,
    failed,
    hpc_user,
    job_names,
    others_text,
    pod_user,
    tenants_of,
)
from ranktop.tui.core.model import RankMap

GRID = RankMap.grid(["n0", "n1"], 2, source="test")  # ranks 0-3: GPUs 0, 1 of n0 and n1
NAMED = replace(GRID, ranks=tuple(replace(r, uuid=f"GPU-{r.rank}") for r in GRID.ranks))


def test_by_uuid_a_gpu_the_job_did_not_name_is_anothers_wherever_its_index():
    gpus = [Gpu("n1", 0, "GPU-2"), Gpu("n1", 1, "GPU-x", "training/eval-0"),
            Gpu("n1", 5, "GPU-y", "training/eval-0"), Gpu("n1", 4, "GPU-z", "job 7")]
    assert tenants_of(gpus, NAMED, ["n1"]) == {"n1": NodeTenants((
        Tenant("training/eval-0", (1, 5)), Tenant("job 7", (4,))))}


def test_without_uuids_the_jobs_gpus_are_known_by_host_and_index():
    gpus = [Gpu("n0", 0, "GPU-q"), Gpu("n0", 1), Gpu("n0", 2, "", "job 7"), Gpu("n0", 3)]
    assert tenants_of(gpus, GRID, ["n0"]) == {"n0": NodeTenants((
        Tenant("job 7", (2,)), Tenant("", (3,))))}


def test_every_node_asked_is_answered_and_no_other():
    gpus = [Gpu("n9", 2, "GPU-q", "job 7"), Gpu("n0", 0, "GPU-0")]
    assert tenants_of(gpus, NAMED, ["n0", "n1"]) == {"n0": NodeTenants(), "n1": NodeTenants()}


def test_the_drains_line_says_who_else_nothing_or_not_known():
    both = NodeTenants((Tenant("research/eval-0", (8, 9)), Tenant("", (10,))))
    assert others_text("n1", both) == (
        "also on n1: research/eval-0 (GPUs 8, 9); a GPU with no job label (GPU 10): "
        "a drain stops them too")
    one = NodeTenants((Tenant("job 4242", (3,)),))
    assert others_text("n1", one) == "also on n1: job 4242 (GPU 3): a drain stops it too"
    assert others_text("n1", NodeTenants()) == "also on n1: nothing else runs on it"
    assert others_text("n1", None) == "also on n1: not known"
    [down] = failed(["n1"], "HTTP 503:\n unavailable").values()
    assert not down.known
    assert others_text("n1", down) == "also on n1: not known (HTTP 503: unavailable)"


def test_the_names_another_job_goes_by_in_the_jobs_list():
    assert job_names(hpc_user("eval-sweep-7")) == ("eval-sweep-7",)
    assert job_names(pod_user("eval-0", "research")) == ("eval-0", "research")
    assert job_names("eval-0") == ("eval-0",)
    assert job_names("") == ()


def test_only_a_drain_names_the_other_jobs_on_its_node():
    others = NodeTenants((Tenant(hpc_user("eval-sweep-7"), (8, 9)), Tenant("", (10,))))
    drain = Action(DRAIN, "rule", "why", node="n0", others=others)
    assert drain.other_jobs == ("eval-sweep-7",)
    assert Action(RESET, "rule", "why", node="n0", gpu=1, others=others).other_jobs == ()
    assert Action(DRAIN, "rule", "why", node="n0").other_jobs == ()

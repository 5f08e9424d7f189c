"""The words of the jobs list's columns: a node shared with other jobs is said in the row
(the first node named, the others counted), and in the JSON document, made plain."""

from __future__ import annotations

from ranktop.tui.core.fleet import JobFacts, judge
from ranktop.tui.core.fleet_cells import NARROWEST, cells, cut, fitted, jobs_document

NOW = 1_800_000_000.0


def _row(shared):
    return judge(JobFacts("eval-sweep-7", 16, 16, steps=30.0, shared=shared), NOW)


def test_a_node_shared_with_other_jobs_is_said_in_the_row():
    assert cells(_row({}))["shares"] == ""
    row = _row({"gpu-node-056": ("llama-70b-pretrain",)})
    assert cells(row)["shares"] == "gpu-node-056: llama-70b-pretrain"
    row = _row({"gpu-node-056": ("a", "b"), "gpu-node-003": ("c",), "gpu-node-009": ("d",)})
    assert cells(row)["shares"] == "gpu-node-003: c (+2 nodes)"


def test_sharing_is_healthy_and_in_the_document_made_plain():
    row = _row({"gpu-node-056": ("job\x1b[31m",)})
    assert row.healthy
    document = jobs_document([row], time=NOW, source="demo", recorded=False, errors={},
                             version="1")
    [others] = document["jobs"][0]["shared_nodes"]["gpu-node-056"]
    assert others.startswith("job") and "\x1b" not in others


def test_a_stall_is_said_once_in_progress_and_worst_names_what_comes_after_it():
    stalled = judge(JobFacts("llama", 512, 512, steps=0.0), NOW)
    said = cells(stalled)
    assert said["progress"] == "stalled ≥ 2 min" and said["worst"] == ""
    with_xid = judge(JobFacts("llama", 512, 512, steps=0.0, xid_gpus=1), NOW)
    said = cells(with_xid)
    assert said["progress"] == "stalled ≥ 2 min" and said["worst"] == "XID on 1 GPU"
    document = jobs_document([with_xid], time=NOW, source="demo", recorded=False, errors={},
                             version="1")
    assert document["jobs"][0]["worst"] == "stalled ≥ 2 min"  # the document names the worst


def test_a_running_jobs_worst_is_its_worst():
    row = judge(JobFacts("llama", 512, 512, steps=30.0, xid_gpus=1, ecc_gpus=2), NOW)
    assert cells(row)["worst"] == "XID on 1 GPU" and row.next_worst == "ECC errors on 2 GPUs"


def test_the_free_text_columns_are_cut_shares_first_to_fit_and_never_below_the_narrowest():
    line = {"job": "j" * 30, "ranks": "512/512", "progress": "46 steps", "worst": "w" * 15,
            "alerts": "", "goodput": "100 %", "owner": "o" * 20, "shares": "s" * 40}
    whole = fitted([line], 1000)
    assert whole == {column: len(text) for column, text in line.items()}
    room = sum(whole.values()) - 10
    assert fitted([line], room) == {**whole, "shares": 30}
    room = sum(whole.values()) - 30
    assert fitted([line], room) == {**whole, "shares": NARROWEST, "owner": 18}
    narrowest = fitted([line], 0)
    assert [narrowest[c] for c in ("shares", "owner", "job")] == [NARROWEST] * 3
    assert narrowest["worst"] == 15  # a verdict is never cut
    assert cut("gpu-node-056", 12) == "gpu-node-056" and cut("gpu-node-056", 8) == "gpu-nod…"

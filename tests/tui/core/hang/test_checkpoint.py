"""The job's last checkpoint: from the metric, or from the common trainers' saved-checkpoint
lines (or the configured pattern), the newest of a rank's lines; hang triage carries it."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.hang.checkpoint import (
    LOG,
    METRIC,
    Checkpoint,
    checkpoint_pattern,
    from_metric,
    newer,
    newest_in_lines,
)
from ranktop.tui.core.hang.triage import HangScan

MEGATRON = ("2026-03-14 02:02:23,016 INFO [rank 0] successfully saved checkpoint from "
            "iteration  120100 to /checkpoints/iter_0120100")


@pytest.mark.parametrize("line, step", [
    (MEGATRON, 120_100),
    ("  successfully saved checkpoint from iteration    2000 to /ckpt [ t 1/2, p 1/1 ]", 2000),
    ("[titan] 2026-03-14 02:00:00,000 - root - INFO - Saving checkpoint at step 1500", 1500),
    ("INFO Saved checkpoint to ./outputs/checkpoint/step-1200 in 3.21 seconds", 1200),
    ("Epoch 0, global step 500: 'val_loss' reached 0.51 (best 0.51), saving model to "
     "'/ckpt/epoch=0-step=500.ckpt' as top 1", 500),
])
def test_the_common_trainers_saved_checkpoint_lines_are_recognised(line, step):
    assert newest_in_lines(["step 7 loss 2.1", line, "step 8 loss 2.0"], rank=0) == \
        Checkpoint(step, LOG, line.strip(), 0)


@pytest.mark.parametrize("line", [
    "[rank 0] step 120040 loss 2.101 step_time 1.12s tokens/s 3.75e6",
    "loading checkpoint from /ckpt/step-1200",
    "WARNING [rank 0] loss still rising at step 5; consider rolling back to the last checkpoint",
    "Saving the checkpoint (or staging if async is enabled).",
])
def test_lines_that_save_nothing_or_name_no_step_are_not_checkpoints(line):
    assert newest_in_lines([line]) is None


def test_the_newest_line_of_a_rank_wins():
    lines = ["Saving checkpoint at step 100", "step 150", "Saving checkpoint at step 200",
             "step 250"]
    assert newest_in_lines(lines).step == 200


def test_a_configured_pattern_replaces_the_usual_ones():
    pattern = checkpoint_pattern(r"ckpt written: iter=(?P<step>\d+)")
    assert newest_in_lines(["ckpt written: iter=4242"], pattern).step == 4242
    assert newest_in_lines([MEGATRON], pattern) is None


@pytest.mark.parametrize("text, words", [
    ("ckpt (?P<step>\\d+", "not a regular expression: missing ), unterminated subpattern"),
    ("saved at (\\d+)", "needs a named group (?P<step>...) around the step number"),
])
def test_a_bad_pattern_is_refused_in_one_line(text, words):
    with pytest.raises(ValueError) as error:
        checkpoint_pattern(text)
    assert str(error.value).startswith(words) and "\n" not in str(error.value)


def test_the_metric_gives_a_checkpoint_when_exported():
    assert from_metric({"checkpoint_step": 12_300.0}) == Checkpoint(12_300, METRIC)
    assert from_metric({"checkpoint_step": math.nan}) is None
    assert from_metric({}) is None and from_metric(None) is None


def test_of_two_checkpoints_the_later_step_wins():
    a, b = Checkpoint(100, LOG, "a", 0), Checkpoint(200, LOG, "b", 3)
    assert newer(a, b) == newer(b, a) == b
    assert newer(None, a) == newer(a, None) == a


def test_hang_triage_carries_the_newest_checkpoint_any_rank_logged():
    scan = HangScan(4)
    scan.add({0: ["Saving checkpoint at step 100"], 1: ["nothing"],
              2: ["Saving checkpoint at step 300", "NCCL INFO Init COMPLETE"]})
    assert scan.checkpoint == Checkpoint(300, LOG, "Saving checkpoint at step 300", 2)
    scan.add({3: ["[rank3]: ProcessGroupNCCL's watchdog got stuck"]})
    assert scan.checkpoint.step == 300

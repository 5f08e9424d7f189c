"""Discovery of a job's own metrics: names that look like a step time and friends, labels
that look like a rank, a local GPU, a host or pod and the job, against a fake backend that
evaluates what discovery asks."""

from __future__ import annotations

import pytest
from ranktop.tui.sources.prometheus.discovery import discover, label_roles, role_of

from tests.tui.sources.fake_prometheus import FakePrometheus, job_series

NOW = 1_800_000_000.0


@pytest.mark.parametrize("name,role", [
    ("training_step_duration_seconds", "step_time"),
    ("iteration_time_ms", "step_time"),
    ("trainer_batch_latency_seconds", "step_time"),
    ("training_step_compute_seconds", "compute_time"),
    ("fwd_bwd_time_seconds", "compute_time"),
    ("train_loss", "loss"),
    ("train_tokens_per_sec", "tokens_per_s"),
    ("tokens_processed_total", "tokens_per_s"),
    ("samples_per_second", "samples_per_s"),
    ("global_step", "step"),
    ("training_iteration", "step"),
    ("last_checkpoint_iteration", "checkpoint_step"),
    ("training_checkpoint_step", "checkpoint_step"),
    ("ckpt_saved_step", "checkpoint_step"),
    ("checkpoint_step_seconds", "step_time"),  # a phase's time: a weak step time
    ("loss_scale", None),  # the AMP scaler, not a loss
    ("dataloader_wait_seconds", None),
    ("DCGM_FI_DEV_GPU_TEMP", None),
])
def test_names_suggest_their_role(name, role):
    found = role_of(name)
    assert (found[0] if found else None) == role


def test_a_phase_of_the_step_is_a_weak_step_time():
    whole, phase = role_of("train_step_seconds"), role_of("optimizer_step_seconds")
    assert whole[0] == phase[0] == "step_time"
    assert phase[1] < 0.5 <= whole[1]
    assert role_of("checkpoint_step_seconds")[1] < 0.5


def test_labels_play_their_parts_whatever_their_case():
    assert label_roles(["RANK", "LOCAL_RANK", "pod", "job", "gpu_uuid", "bad-label"]) == {
        "rank": "RANK", "local": "LOCAL_RANK", "pod": "pod", "uuid": "gpu_uuid"}
    assert label_roles(["global_rank", "host"]) == {"rank": "global_rank", "host": "host"}


def foreign(ranks: int = 4, job: str = "llama") -> list[dict]:
    return [*job_series("training_step_duration_seconds", ranks, job),
            *job_series("training_step_compute_seconds", ranks, job),
            *job_series("train_loss", ranks, job)]


def test_a_foreign_job_is_found_with_its_labels_and_is_unambiguous():
    backend = FakePrometheus([*foreign(), {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0"}])
    found = discover(backend, now=NOW)
    step = found.best("step_time")
    assert step.name == "training_step_duration_seconds"
    assert step.promql == "training_step_duration_seconds{job}"
    assert dict(step.labels) == {"rank": "rank", "local": "local_rank", "host": "hostname",
                                 "job": "exported_job"}  # the job's own label beats job
    assert (step.series, step.jobs) == (4, (("llama", 4),))
    assert (found.job, found.job_label, found.other_jobs) == ("llama", "exported_job", ())
    assert found.unambiguous("step_time") and found.unambiguous("loss")
    assert found.best("compute_time").name == "training_step_compute_seconds"
    assert not any(c.name.startswith("DCGM_") for c in found.candidates)


def test_two_jobs_are_ambiguous_until_one_is_named():
    backend = FakePrometheus([*foreign(4, "llama"), *foreign(8, "mistral")])
    found = discover(backend, now=NOW)
    assert (found.job, found.other_jobs) == ("mistral", ("llama",))  # the most ranks first
    assert not found.unambiguous("step_time")
    named = discover(backend, job="llama", now=NOW)
    assert (named.job, named.other_jobs) == ("llama", ())
    assert named.unambiguous("step_time")


def test_a_named_job_that_is_not_there_is_never_unambiguous():
    found = discover(FakePrometheus(foreign()), job="nope", now=NOW)
    assert (found.job, found.missing) == ("llama", "nope")
    assert found.best("step_time") is not None and not found.unambiguous("step_time")


def test_a_pod_only_job_is_labelled_by_its_pod():
    series = [{"__name__": "step_time_seconds", "job": "train", "rank": str(r),
               "local_rank": "0", "pod": f"w-{r}"} for r in range(3)]
    step = discover(FakePrometheus(series), now=NOW).best("step_time")
    assert dict(step.labels) == {"rank": "rank", "local": "local_rank", "pod": "pod",
                                 "job": "job"}


def test_the_named_jobs_own_labels_count_not_anothers():
    theirs = job_series("training_step_duration_seconds", 2, "other")  # labelled hostname
    mine = [{"__name__": "training_step_duration_seconds", "exported_job": "k8s",
             "rank": str(r), "local_rank": "0", "pod": f"w-{r}"} for r in range(2)]
    step = discover(FakePrometheus([*theirs, *mine]), job="k8s", now=NOW).best("step_time")
    assert "host" not in step.labels and step.label("pod") == "pod"


def test_a_histogram_of_step_times_is_read_as_its_mean():
    series = [*job_series("train_step_seconds_sum", 2), *job_series("train_step_seconds_count", 2),
              *job_series("train_step_seconds_bucket", 2, le="1")]
    step = discover(FakePrometheus(series), now=NOW).best("step_time")
    assert step.name == "train_step_seconds"
    assert step.promql == "rate(train_step_seconds_sum{job}[1m]) / " \
                          "rate(train_step_seconds_count{job}[1m])"
    assert step.fresh_metric == "train_step_seconds_count"


def test_a_rank_label_without_numbers_is_no_rank():
    series = [{"__name__": "train_step_seconds", "job": "a", "rank": f"worker-{r}"}
              for r in range(3)]
    found = discover(FakePrometheus(series), now=NOW)
    assert "rank" not in found.of("step_time")[0].labels
    assert found.best("step_time") is None  # a map needs ranks: listed, never used


def test_hostile_names_are_never_asked_about():
    series = [*foreign(2), {"__name__": 'x{a="1"} or vector(1)', "rank": "0"}]
    backend = FakePrometheus(series)
    found = discover(backend, now=NOW)
    assert all("vector(1)" not in asked for asked in backend.asked)
    assert found.best("step_time").name == "training_step_duration_seconds"


def test_a_backend_that_cannot_list_names_says_so_and_one_bad_candidate_is_skipped():
    failed = discover(FakePrometheus(foreign(), failing={"names"}), now=NOW)
    assert failed.error.startswith("cannot list the metrics: HTTP 503") and not failed
    sizing = ('count by (exported_job, job) (count by (exported_job, job, rank) '
              '(train_loss{rank=~"[0-9]+"}))')
    found = discover(FakePrometheus(foreign(), failing={sizing}), now=NOW)
    assert found.best("loss") is None and found.best("step_time") is not None

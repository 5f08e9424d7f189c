"""What discovery found, as config: the lines check-config prints load as the user's file
would, read the found series, and are the settings the console would adopt."""

from __future__ import annotations

import tomllib
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.writer import toml_text
from ranktop.tui.sources.prometheus.discovery import discover
from ranktop.tui.sources.prometheus.suggest import apply, chosen, suggestion

from tests.tui.sources.fake_prometheus import FakePrometheus, job_series

NOW = 1_800_000_000.0


def found_in(*series_lists, job=""):
    series = [s for group in series_lists for s in group]
    return discover(FakePrometheus(series), job=job, now=NOW)


def settings(tmp_path, text: str = "", **prometheus):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_settings(path, {"prometheus": prometheus} if prometheus else None, environ={})


FOREIGN = (job_series("training_step_duration_seconds", 4),
           job_series("training_step_compute_seconds", 4),
           job_series("training_iteration", 4), job_series("train_tokens_per_sec", 4))


def test_the_printed_lines_load_as_a_config_and_read_what_was_found(tmp_path):
    found = found_in(*FOREIGN)
    table = suggestion(found, settings(tmp_path))
    text = toml_text(table)
    assert tomllib.loads(text) == table
    loaded = settings(tmp_path, text)
    assert loaded.prometheus.job == "llama"
    assert (loaded.ranks.job_label, loaded.ranks.rank_label, loaded.ranks.host_label) == (
        "exported_job", "rank", "hostname")
    assert loaded.ranks.step_metric == "training_step_duration_seconds"
    assert loaded.metrics["step_time"].queries[0].promql == "training_step_duration_seconds{job}"
    assert loaded.job_metrics["step"] == "max(training_iteration{job})"
    assert loaded.job_metrics["tokens_per_s"] == "sum(train_tokens_per_sec{job})"
    assert loaded.job_metrics["loss"] == "avg(training_loss{job})"  # none found: the default
    # the console's adoption reads the same
    adopted = apply(settings(tmp_path), table, {"step_time": "found"})
    assert adopted.ranks == loaded.ranks and adopted.job_metrics == loaded.job_metrics
    assert adopted.metrics["step_time"].queries[0].promql == "training_step_duration_seconds{job}"
    assert adopted.metrics["step_time"].queries[0].shows == "found"


def test_an_ambiguous_find_is_printed_but_never_adopted(tmp_path):
    found = found_in(*FOREIGN, job_series("training_step_duration_seconds", 4, "other"))
    assert suggestion(found, settings(tmp_path), only_unambiguous=True) == {}
    assert suggestion(found, settings(tmp_path))["ranks"]["step_metric"] == (
        "training_step_duration_seconds")


def test_compute_time_without_a_step_time_is_not_suggested(tmp_path):
    found = found_in(job_series("fwd_bwd_time_seconds", 4))
    assert "compute_time" not in chosen(found)
    assert suggestion(found, settings(tmp_path)) == {}


def test_series_without_a_job_label_select_every_job(tmp_path):
    series = [{"__name__": "step_time_seconds", "rank": str(r)} for r in range(2)]
    table = suggestion(found_in(series), settings(tmp_path, job="llama"))
    assert table["prometheus"] == {"job": ""} and "job_label" not in table["ranks"]

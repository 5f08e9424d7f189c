"""The source's finder: discovery now and then while the job's metrics are empty, an
unambiguous find used at once and said, and a note on every empty map."""

from __future__ import annotations

from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.finder import DISCOVER_EVERY_SECONDS, Finder

from tests.tui.sources.fake_prometheus import FakePrometheus, job_series


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def settings(**prometheus):
    return load_settings(overrides={"prometheus": {"url": "http://p", **prometheus}}, environ={})


def foreign(job: str = "llama") -> list[dict]:
    return [*job_series("training_step_duration_seconds", 4, job),
            *job_series("training_step_compute_seconds", 4, job),
            {"__name__": "up", "job": "pods", "value": "1"}]


def test_an_unambiguous_find_is_used_and_said():
    finder = Finder(FakePrometheus(foreign()), Clock())
    found = finder.after_poll(settings(), job_empty=True, dcgm_empty=False)
    assert found.metrics["step_time"].queries[0].promql == "training_step_duration_seconds{job}"
    assert (found.prometheus.job, found.ranks.job_label) == ("llama", "exported_job")
    assert finder.shows == {"step_time": "training_step_duration_seconds, found",
                            "compute_time": "training_step_compute_seconds, found"}
    assert finder.status_note().startswith(
        'using training_step_compute_seconds, training_step_duration_seconds of '
        'exported_job="llama": found, not in your config (unambiguous')


def test_an_ambiguous_find_is_only_suggested_on_the_empty_maps():
    backend = FakePrometheus([*foreign("llama"), *foreign("mistral")])
    finder = Finder(backend, Clock())
    configured = settings()
    assert finder.after_poll(configured, job_empty=True, dcgm_empty=True) is None
    notes = finder.notes(configured, values={"sm_active": []})
    assert notes["step_time"] == "`ranktop check-config` suggests training_step_duration_seconds"
    assert notes["temperature"].startswith("no DCGM_FI_DEV_GPU_TEMP series at all")
    assert "sm_active" not in notes
    assert finder.status_note() == ("job metrics not exported; `ranktop check-config` "
                                    "suggests training_step_duration_seconds")


def test_discovery_runs_now_and_then_not_every_poll():
    clock = Clock()
    backend = FakePrometheus([*foreign("llama"), *foreign("mistral")])
    finder = Finder(backend, clock)
    for _ in range(3):
        finder.after_poll(settings(), job_empty=True, dcgm_empty=False)
        clock.now += 2
    assert backend.asked.count("names") == 1
    clock.now += DISCOVER_EVERY_SECONDS
    finder.after_poll(settings(), job_empty=True, dcgm_empty=False)
    assert backend.asked.count("names") == 2


def test_data_back_clears_why_it_was_missing():
    finder = Finder(FakePrometheus([{"__name__": "up", "job": "t", "value": "0"}]), Clock())
    finder.after_poll(settings(job="x"), job_empty=True, dcgm_empty=True)
    assert finder.why.job and finder.why.dcgm
    finder.after_poll(settings(job="x"), job_empty=False, dcgm_empty=False)
    assert (finder.why.job, finder.why.dcgm) == ("", "")


def targets(value: str, n: int = 8) -> list[dict]:
    return [{"__name__": "up", "job": "ranks", "instance": f"h{i}", "value": value}
            for i in range(n)]


def test_what_is_said_of_the_scrape_targets_is_what_up_says_at_each_poll():
    # As on a real job without DCGM: its GPU series were never there, every target up;
    # then the job's agents tore its ranks down: up == 0 for all eight, its series gone.
    clock = Clock()
    backend = FakePrometheus(targets("1"))
    finder = Finder(backend, clock)
    finder.after_poll(settings(job="llm"), job_empty=False, dcgm_empty=True)
    assert finder.why.dcgm == ("no DCGM_FI_DEV_GPU_TEMP series at all; every scrape target "
                               "is up (8 of 8)")
    backend.series = targets("0")
    clock.now += 2
    finder.after_poll(settings(job="llm"), job_empty=True, dcgm_empty=True)
    down = 'scrape targets down (up == 0): "ranks" 8 of 8'
    assert finder.why.dcgm == f"no DCGM_FI_DEV_GPU_TEMP series at all; {down}"
    assert finder.why.job == f"no training_step_seconds series at all; {down}"


def test_targets_that_go_down_between_two_explanations_are_said_at_once():
    clock = Clock()
    backend = FakePrometheus(targets("1"))
    finder = Finder(backend, clock)
    finder.after_poll(settings(job="llm"), job_empty=True, dcgm_empty=True)
    assert "every scrape target is up (8 of 8)" in finder.why.job
    backend.series = [*targets("0", 3), *targets("1")[3:]]
    clock.now += 2  # well within the minute between two full explanations
    finder.after_poll(settings(job="llm"), job_empty=True, dcgm_empty=True)
    assert finder.why.job == ('no training_step_seconds series at all; scrape targets down '
                              '(up == 0): "ranks" 3 of 8')
    backend.failing = {"count by (job) (up)"}
    clock.now += 2
    finder.after_poll(settings(job="llm"), job_empty=True, dcgm_empty=True)
    assert finder.why.dcgm == ("no DCGM_FI_DEV_GPU_TEMP series at all; cannot tell whether "
                               "its scrape targets are up: HTTP 422: bad query")

"""Why a query came back empty: targets down, the job under another name, a selector that
matches nothing, against a fake backend that evaluates what diagnosis asks."""

from __future__ import annotations

from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.diagnosis import ScrapeJob, explain, shown, targets_text

from tests.tui.sources.fake_prometheus import FakePrometheus


def up(job: str, value: int, n: int = 1) -> list[dict]:
    return [{"__name__": "up", "job": job, "instance": f"h{i}", "value": str(value)}
            for i in range(n)]


def settings(**prometheus):
    return load_settings(overrides={"prometheus": prometheus}, environ={})


def test_targets_down_are_counted_per_scrape_job_dcgm_told_apart():
    jobs = [ScrapeJob("dcgm-exporter", 2, 8), ScrapeJob("training", 3, 4),
            ScrapeJob("node", 0, 8)]
    assert targets_text(jobs, dcgm=True) == (
        'dcgm-exporter scrape targets down (up == 0): "dcgm-exporter" 2 of 8')
    assert targets_text(jobs, dcgm=False) == 'scrape targets down (up == 0): "training" 3 of 4'
    assert targets_text([ScrapeJob("a", 0, 3), ScrapeJob("b", 0, 2)], dcgm=True) == (
        "every scrape target is up (5 of 5)")
    assert targets_text([], dcgm=False) == "no scrape targets at all (no up series)"
    # only dcgm-exporter's jobs are down: the job's side names them, as every job down
    assert targets_text([ScrapeJob("gpus-x", 1, 1)], dcgm=False) == (
        'scrape targets down (up == 0): "gpus-x" 1 of 1')


def test_nothing_at_all_with_targets_down():
    backend = FakePrometheus([*up("training", 0, 2), *up("dcgm-exporter", 0), *up("node", 1)])
    why = explain(backend, settings(job="llm"), job_empty=True, dcgm_empty=True)
    assert why.job == ('no training_step_seconds series at all; scrape targets down '
                       '(up == 0): "training" 2 of 2')
    assert why.dcgm == ('no DCGM_FI_DEV_GPU_TEMP series at all; dcgm-exporter scrape targets '
                        'down (up == 0): "dcgm-exporter" 1 of 1')


def steps(job: str, n: int) -> list[dict]:
    return [{"__name__": "training_step_seconds", "training_job": job, "rank": str(r)}
            for r in range(n)]


def test_the_job_under_another_name_lists_the_names_there_are():
    backend = FakePrometheus([*steps("llama", 3), *steps("mistral", 5), *up("t", 1)])
    why = explain(backend, settings(job="lama"), job_empty=True, dcgm_empty=False)
    assert why.job == ('training_step_seconds has no series with training_job="lama"; it has '
                       'training_job="mistral" (5 series), "llama" (3 series)')
    assert why.dcgm == ""


def test_series_without_the_job_label_say_so():
    backend = FakePrometheus([{"__name__": "training_step_seconds", "rank": "0"}])
    why = explain(backend, settings(job="llama"), job_empty=True, dcgm_empty=False)
    assert why.job == "training_step_seconds has 1 series, none with a training_job label"


def test_a_dcgm_selector_that_matches_nothing():
    temps = [{"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": str(g)} for g in range(4)]
    why = explain(FakePrometheus([*temps, *up("d", 1)]), settings(dcgm_selector='cluster="b"'),
                  job_empty=False, dcgm_empty=True)
    assert why.dcgm == ('DCGM_FI_DEV_GPU_TEMP has 4 series, none matching {cluster="b"} '
                        "(dcgm_selector)")


def test_dcgm_46_names_are_not_called_absent():
    temps = [{"__name__": "DCGM_FI_DEV_GPU_TEMP_CELSIUS", "gpu": str(g)} for g in range(4)]
    why = explain(FakePrometheus([*temps, *up("d", 1)]), settings(dcgm_selector='cluster="b"'),
                  job_empty=False, dcgm_empty=True)
    assert why.dcgm == ('DCGM_FI_DEV_GPU_TEMP_CELSIUS has 4 series, none matching '
                        '{cluster="b"} (dcgm_selector)')


def test_a_question_that_fails_says_it_cannot_tell():
    backend = FakePrometheus([], failing={"count by (job) (up)"})
    why = explain(backend, settings(job="x"), job_empty=True, dcgm_empty=False)
    assert why.job == "cannot tell why: HTTP 422: bad query" and why.dcgm == ""


def test_values_from_outside_are_shown_short_and_without_controls():
    assert shown("ab\x1b]52;c;evil\x07") == '"ab?]52;c;evil?"'
    assert len(shown("x" * 500)) == 62 and shown("x" * 500).endswith('…"')


def test_both_sides_said_in_one_line_name_targets_they_share_once():
    backend = FakePrometheus(up("realjob", 0, 8))
    why = explain(backend, settings(job="realjob"), job_empty=True, dcgm_empty=True)
    assert why.said == ('no training_step_seconds series at all, no DCGM_FI_DEV_GPU_TEMP series '
                        'at all; scrape targets down (up == 0): "realjob" 8 of 8')
    apart = FakePrometheus([*up("training", 0, 2), *up("dcgm-exporter", 0)])
    why = explain(apart, settings(job="llm"), job_empty=True, dcgm_empty=True)
    assert why.said == (f"{why.job}; {why.dcgm}")
    assert why.dcgm.endswith('dcgm-exporter scrape targets down (up == 0): "dcgm-exporter" 1 of 1')

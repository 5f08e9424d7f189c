"""One poll's analysis takes the job's median of each metric once: the summaries, the
colour scales, the history and the detectors share it."""

from __future__ import annotations

import statistics
from collections import Counter

import pytest
from ranktop.tui.core import metrics
from ranktop.tui.core.analysis import Analyser
from ranktop.tui.core.detect import detectors as detect
from ranktop.tui.core.detect import straggler
from ranktop.tui.core.model import Frame, Health, RankMap, SourceStatus
from ranktop.tui.settings.config import load_settings

RANKS = 64
METRICS = ("step_time", "compute_time", "sm_active", "sm_clock", "temperature", "nvlink",
           "power", "gpu_util")


def values_of(index: int) -> list[float]:
    """Every metric's values differ from every other's, so a median's input names its metric."""
    return [100.0 * (index + 1) + rank / RANKS for rank in range(RANKS)]


METRIC_OF = {tuple(values_of(i)): metric for i, metric in enumerate(METRICS)}


def frame(t: float) -> Frame:
    return Frame(time=t, values={m: values_of(i) for i, m in enumerate(METRICS)},
                 job={"step": t})


@pytest.fixture
def whole_job_medians(monkeypatch) -> Counter:
    taken: Counter = Counter()

    def counted(values):
        values = list(values)
        metric = METRIC_OF.get(tuple(sorted(values)))
        if metric is not None:  # not a median of something else (deviations, nodes)
            taken[metric] += 1
        return statistics.median(values)

    for module in (metrics, detect, straggler):
        monkeypatch.setattr(module, "median", counted, raising=False)
    return taken


def test_each_metric_median_is_taken_once_per_poll(whole_job_medians):
    analyser = Analyser(load_settings(environ={}), "job")
    rank_map = RankMap.grid([f"node-{n}" for n in range(RANKS // 8)], 8, source="test")
    status = SourceStatus("test", Health.OK, since=0.0)
    for poll in range(4):
        whole_job_medians.clear()
        analysis = analyser.analyse(frame(2.0 * poll), status, rank_map)
        assert set(analysis.summaries) == set(METRICS)
        assert whole_job_medians == Counter(METRICS)

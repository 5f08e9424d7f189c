"""Which ranks GPU data named a GPU for, and which GPU metrics never had a value: the
wording of a job without DCGM and the maps that fold away."""

from __future__ import annotations

import math

from ranktop.tui.core.analysis import Analyser
from ranktop.tui.core.gpu_data import FOLD_AFTER_SECONDS, GpuData
from ranktop.tui.core.model import Frame, Health, RankMap, SourceStatus
from ranktop.tui.settings.config import load_settings

NAN = math.nan
GPU_METRICS = ("temperature", "sm_active", "nvlink")
RANKS = RankMap.grid(["node-a", "node-b"], 2, "job metric labels")


def frame(t: float, **values: list[float]) -> Frame:
    return Frame(time=t, values={"step_time": [1.0] * 4, **values})


def test_a_rank_is_named_by_its_gpu_once_any_gpu_metric_has_a_value_for_it():
    data = GpuData(GPU_METRICS)
    data.see(frame(0.0, temperature=[60.0, NAN, NAN, NAN]), 4)
    marked = data.marked(RANKS)
    assert [r.place for r in marked.ranks] == [
        "node-a GPU 0", "node-a local rank 1", "node-b local rank 0", "node-b local rank 1"]
    data.see(frame(2.0, nvlink=[NAN, NAN, 1e9, NAN]), 4)
    assert [r.gpu_named for r in data.marked(RANKS).ranks] == [True, False, True, False]
    # a value gone again does not take the GPU back
    data.see(frame(4.0), 4)
    assert [r.gpu_named for r in data.marked(RANKS).ranks] == [True, False, True, False]


def test_a_step_time_alone_names_no_gpu():
    data = GpuData(GPU_METRICS)
    data.see(frame(0.0), 4)
    assert [r.place for r in data.marked(RANKS).ranks][:2] == [
        "node-a local rank 0", "node-a local rank 1"]


def test_the_marked_map_is_the_same_object_until_a_rank_is_named():
    data = GpuData(GPU_METRICS)
    data.see(frame(0.0), 4)
    first = data.marked(RANKS)
    data.see(frame(2.0), 4)
    assert data.marked(RANKS) is first
    data.see(frame(4.0, temperature=[60.0] * 4), 4)
    assert data.marked(RANKS) is RANKS  # every rank named: the map as it came


def test_gpu_metrics_never_seen_fold_only_after_the_hold():
    data = GpuData(GPU_METRICS)
    assert data.see(frame(0.0), 4).never == frozenset()  # one empty poll folds nothing
    assert data.see(frame(FOLD_AFTER_SECONDS - 1), 4).never == frozenset()
    held = data.see(frame(FOLD_AFTER_SECONDS), 4)
    assert held.never == frozenset(GPU_METRICS) and not held.any_seen


def test_a_gpu_metric_seen_once_never_folds_and_one_late_comes_back():
    data = GpuData(GPU_METRICS)
    data.see(frame(0.0, temperature=[60.0] * 4), 4)
    data.see(frame(20.0), 4)  # the exporter went away: its maps stay, showing the gap
    coverage = data.see(frame(30.0), 4)
    assert coverage.never == {"sm_active", "nvlink"} and coverage.any_seen
    assert "nvlink" not in data.see(frame(32.0, nvlink=[NAN, 1e9, NAN, NAN]), 4).never


def test_a_series_of_no_data_is_not_a_value():
    data = GpuData(GPU_METRICS)
    data.see(frame(0.0, temperature=[NAN] * 4), 4)
    assert data.see(frame(FOLD_AFTER_SECONDS), 4).never == frozenset(GPU_METRICS)
    assert not any(r.gpu_named for r in data.marked(RANKS).ranks)


def test_ranks_that_join_later_are_watched_too():
    data = GpuData(GPU_METRICS)
    data.see(frame(0.0, temperature=[60.0, 60.0]), 2)
    grown = RankMap.grid(["node-a", "node-b"], 2, "job metric labels")
    data.see(frame(2.0, temperature=[60.0, 60.0, NAN, 61.0]), 4)
    assert [r.gpu_named for r in data.marked(grown).ranks] == [True, True, False, True]


def test_the_analysis_places_ranks_of_a_job_without_dcgm_by_local_rank():
    settings = load_settings(environ={})
    analyser = Analyser(settings, "cpu-job")
    status = SourceStatus("test", Health.OK, since=0.0)
    analysis = analyser.analyse(frame(0.0), status, RANKS)
    assert analysis.rank_map.ranks[1].place == "node-a local rank 1"
    later = analyser.analyse(frame(FOLD_AFTER_SECONDS), status, RANKS)
    assert {"sm_active", "temperature", "nvlink"} <= later.gpu.never
    assert "step_time" not in later.gpu.never
    dcgm = Analyser(settings, "gpu-job").analyse(
        frame(0.0, temperature=[60.0] * 4), status, RANKS)
    assert dcgm.rank_map.ranks[1].place == "node-a GPU 1"

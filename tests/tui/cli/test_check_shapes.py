"""check-config says which series are in a shape ranktop does not read."""

from __future__ import annotations

import math

from ranktop.tui.cli.check_shapes import selected_names, unread_shapes
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import QueryError

METRICS = load_settings(environ={}).metrics
NAN = math.nan


class Labels:
    """A backend that knows the label names of a few metrics' series."""

    def __init__(self, held: dict[str, list[str]], failing: str = "") -> None:
        self.held, self.failing = held, failing
        self.asked: list[str] = []

    def label_names(self, metric: str, since: float) -> list[str]:
        self.asked.append(metric)
        if metric == self.failing:
            raise QueryError("HTTP 503", "unavailable")
        return self.held.get(metric, [])


def test_a_metrics_selected_names_are_found_in_each_of_its_queries():
    assert selected_names(METRICS["temperature"]) == {"DCGM_FI_DEV_GPU_TEMP",
                                                      "DCGM_FI_DEV_GPU_TEMP_CELSIUS"}
    assert selected_names(METRICS["collective_time"]) == {
        "nccl_collective_exec_time_microseconds", "training_step_seconds"}


def test_series_held_but_on_no_rank_are_said_with_their_labels():
    # NCCL Inspector 2.30 behind a scrape that renamed its node label
    client = Labels({"nccl_collective_exec_time_microseconds": [
        "__name__", "exported_node", "gpu", "comm_name", "instance", "job"]})
    values = {"step_time": [1.1, 1.2], "collective_time": [NAN, NAN]}
    lines = unread_shapes(client, METRICS.values(), values, now=1e9)
    assert lines == ["collective_time: nccl_collective_exec_time_microseconds has series "
                     "(labels comm_name, exported_node, gpu, instance, job), none on a rank: "
                     "left out, never read as 0"]
    # the job's step series, read fine by step_time, are never asked about
    assert "training_step_seconds" not in client.asked


def test_metrics_on_ranks_and_names_with_no_series_say_nothing():
    client = Labels({"DCGM_FI_DEV_GPU_TEMP": ["gpu", "UUID"]}, failing="DCGM_FI_DEV_XID_ERROR")
    values = {"temperature": [60.0, NAN], "step_time": [1.0, 1.0]}
    assert unread_shapes(client, METRICS.values(), values, now=1e9) == []
    assert "DCGM_FI_DEV_GPU_TEMP" not in client.asked  # its metric has ranks
    assert "DCGM_FI_DEV_XID_ERROR" in client.asked  # asked, failed: nothing said

"""A counter series that first appears while ranktop watches is that many new errors, not
a baseline: dcgm-exporter 4.5.3-4.8.2 skips blank fields, so a counter may have no series
until its first event. A real Prometheus scrapes a fixture in the exporter's format, which
the test changes from before the faults to after them while a console's analysis watches."""

from __future__ import annotations

import shutil
import time

from ranktop.tui.core.analysis import Analyser
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import HERE, Prometheus, scraped_file

JOB = "blank"
POLLS_BEFORE = 3


def test_a_counter_that_appears_with_its_first_event_is_new_errors(tmp_path):
    scrape = tmp_path / "scrape.prom"
    shutil.copy(HERE / "dcgm-4.5.3-blank-before.prom", scrape)
    with scraped_file(scrape) as port:
        server = Prometheus(tmp_path, [port])
        try:
            server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', 4)
            settings = load_settings(overrides={"prometheus": {"url": server.url, "job": JOB}},
                                     environ={})
            source = PrometheusSource(settings)
            analyser = Analyser(settings, JOB)

            def analysed():
                frame = source.poll_now()
                return analyser.analyse(frame, source.status(), source.rank_map)

            for _ in range(POLLS_BEFORE):  # watching before the faults
                assert not [a for a in analysed().anomalies
                            if a.kind in ("memory", "nvlink_errors")]
                time.sleep(1.0)
            shutil.copy(HERE / "dcgm-4.5.3-blank-after.prom", scrape)
            server.wait_for_series("count(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL)", 1)
            server.wait_for_series("count(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS)", 4)
            found = {(a.kind, a.rank): a.summary for a in analysed().anomalies}
        finally:
            server.stop()
    assert found[("memory", 3)].startswith("row(s) remapped +1 in the last 10 min (1 in all)")
    assert "+150 on rank 1" in found[("nvlink_errors", 1)]

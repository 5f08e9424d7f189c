"""`ranktop rules`: recording rules Prometheus accepts, for the job's names; the source reads
the recorded series once Prometheus has them."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import rules as prom_rules
from ranktop.tui.sources.prometheus.client import Sample

from tests.tui.sources.prometheus.test_source import (
    NOW,
    source,  # noqa: F401 (the fixture)
)


def settings():
    return load_settings(overrides={"prometheus": {"job": "llm"}}, environ={})


def test_the_rules_join_dcgm_series_to_ranks_by_gpu_uuid_for_the_jobs_names():
    text = prom_rules.rules_yaml(settings())
    assert "record: ranktop:rank_gpu:info" in text
    assert 'label_replace(training_step_seconds{training_job=\\"llm\\"}, \\"UUID\\"' in text
    assert "record: ranktop:temperature:by_rank" in text
    assert "ranktop:step_time:by_rank" not in text  # the job's own series need no join
    assert "on (UUID) group_left (rank, training_job) ranktop:rank_gpu:info" in text


@pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool")
def test_promtool_accepts_the_rules_ranktop_rules_prints(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert main(["rules", "--job", "llm"]) == 0
    path = tmp_path / "rules.yml"
    path.write_text(capsys.readouterr().out)
    checked = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout


def test_a_bad_flag_is_one_line_and_status_2(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["rules", "--nodes", "3"])
    assert ended.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_the_source_reads_the_recorded_series_once_prometheus_has_them(source):  # noqa: F811
    source.client.answers["recorded"] = [Sample({"__name__": "ranktop:power:by_rank"}, 4, NOW)]
    source.poll_now()  # asks what Prometheus records by rank
    assert source.queries()["metric:power"].startswith("max by (rank")
    assert "ranktop:power:by_rank{training_job=\"j\"}" in source.queries()["metric:power"]
    assert "DCGM_FI_DEV_POWER_USAGE" not in source.queries()["metric:power"]
    assert "ranktop:" not in source.queries()["metric:temperature"]  # the map's: DCGM's own
    source.client.answers["metric:power"] = [
        Sample({"rank": str(r), "training_job": "j"}, 300.0 + r, NOW) for r in range(4)]
    assert source.poll_now().values["power"] == [300.0, 301.0, 302.0, 303.0]

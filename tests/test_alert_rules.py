"""The shipped Prometheus alerting rules: valid, unit-tested by promtool, every alert covered.

promtool comes with Debian's `prometheus` package. Without it these tests skip, except where
CI=true: there a missing promtool is a failure, never a skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ranktop.tui.simulator.families import (
    DCGM_FAMILIES,
    JOB_FAMILIES,
    TRAINING_FAMILIES,
    XID_FAMILY,
)

RULES_DIR = Path(__file__).resolve().parents[1] / "config" / "prometheus"
RULES = RULES_DIR / "ranktop-alerts.yml"
RULE_TESTS = RULES_DIR / "ranktop-alerts.test.yml"
ALERTS = {
    "GPUTemperatureHigh", "GPUSMActivityLow", "GPUECCDoubleBitErrors", "GPUXIDError",
    "NVLinkBandwidthLow", "TrainingStraggler", "DCGMExporterDown",
}


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail("promtool is not installed, and CI must run the alert-rule tests: install "
                    "Debian's `prometheus` package (apt-get install prometheus)", pytrace=False)
    pytest.skip("promtool is not installed (Debian package `prometheus`)")


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=RULES_DIR,
                          check=False)


def test_promtool_check_rules_passes(promtool):
    result = run(promtool, "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in result.stdout


def test_promtool_unit_tests_pass(promtool):
    result = run(promtool, "test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout and "FAILED" not in result.stdout


def alert_names() -> list[str]:
    return re.findall(r"^\s*- alert:\s*(\w+)\s*$", RULES.read_text(), re.M)


def test_the_rule_file_has_the_documented_alerts_in_two_groups():
    text = RULES.read_text()
    assert sorted(alert_names()) == sorted(ALERTS)
    assert re.findall(r"^\s*- name:\s*(\S+)", text, re.M) == ["ranktop-gpu", "ranktop-training"]
    assert text.count("severity:") == len(ALERTS)
    assert text.count("summary:") == len(ALERTS) and text.count("description:") == len(ALERTS)


def test_every_alert_has_a_firing_and_a_quiet_case():
    """Each `alertname:` block of the promtool tests either expects alerts or expects none."""
    firing: set[str] = set()
    quiet: set[str] = set()
    current = None
    for line in RULE_TESTS.read_text().splitlines():
        if found := re.match(r"\s*alertname:\s*(\w+)", line):
            current = found[1]
        elif current and re.match(r"\s*exp_alerts:\s*\[\]\s*$", line):
            quiet.add(current)
        elif current and re.match(r"\s*- exp_labels:", line):
            firing.add(current)
        elif re.match(r"\s*- (interval|eval_time):", line):
            current = None
    assert firing == ALERTS, f"alerts never seen firing: {ALERTS - firing}"
    assert quiet == ALERTS, f"alerts never seen quiet: {ALERTS - quiet}"


def expressions() -> str:
    """The text of every rule's expr, without comments or annotations."""
    exprs, indent = [], None
    for line in RULES.read_text().splitlines():
        depth = len(line) - len(line.lstrip())
        if found := re.match(r"(\s*)expr:\s*(.*)$", line):
            indent = len(found[1])
            exprs.append(found[2].lstrip("|"))
        elif indent is not None and line.strip() and depth > indent:
            exprs.append(line)
        elif line.strip():
            indent = None
    return "\n".join(exprs)


def test_the_rules_read_only_metrics_that_ranktop_simulate_serves():
    served = {f.name for f in (*DCGM_FAMILIES, XID_FAMILY, *TRAINING_FAMILIES, *JOB_FAMILIES)}
    used = set(re.findall(r"\b(DCGM_\w+|training_\w+)\b", expressions()))
    used.discard("training_job")  # a label
    assert used <= served, used - served
    assert {"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "training_compute_seconds"} <= used


def test_no_rate_over_the_nvlink_total_counter_and_no_naive_xid():
    text = expressions()
    assert not re.search(r"(rate|increase|irate)\(DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", text)
    assert not re.search(r"DCGM_FI_DEV_XID_ERRORS\s*>", text)

"""Settings: defaults load, a user file overrides, and every error names file and key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.reader import ConfigError


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults_name_the_four_maps_and_their_bad_directions():
    settings = load_settings()
    assert settings.maps == ("sm_active", "temperature", "nvlink", "step_time")
    metrics = settings.metrics
    assert metrics["temperature"].bad == "high"
    assert metrics["sm_active"].bad == "low"
    assert metrics["nvlink"].bad == "low"
    assert metrics["step_time"].bad == "high"
    assert metrics["step_time"].scale is None  # auto
    assert metrics["temperature"].warn == 82
    assert settings.refresh_seconds == 2.0
    assert (settings.demo.nodes, settings.demo.gpus_per_node) == (64, 8)


def test_a_user_file_overrides_single_keys(tmp_path):
    path = write(tmp_path, "[display]\nrefresh_seconds = 5\n[metrics.temperature]\nwarn = 85\n")
    settings = load_settings(path)
    assert settings.refresh_seconds == 5
    assert settings.metrics["temperature"].warn == 85
    assert settings.metrics["temperature"].title == "GPU temperature"
    assert settings.config_file == path


def test_the_xdg_config_file_is_read(tmp_path, monkeypatch):
    folder = tmp_path / "xdg2" / "ranktop"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text("[demo]\nnodes = 3\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg2"))
    assert load_settings().demo.nodes == 3


def test_flags_override_the_file(tmp_path):
    path = write(tmp_path, "[demo]\nnodes = 3\n")
    assert load_settings(path, {"demo": {"nodes": 9}}).demo.nodes == 9


@pytest.mark.parametrize("text,key,problem", [
    ("[display]\nrefresh_seconds = 'fast'\n", "display.refresh_seconds", "must be a number"),
    ("[display]\nrefresh_seconds = 0\n", "display.refresh_seconds", "between"),
    ("[display]\nmaps = ['sm_active']\n", "display.maps", "exactly four"),
    ("[display]\nmaps = ['a', 'b', 'c', 'd']\n", "display.maps", "unknown metric 'a'"),
    ("[metrics.temperature]\nbad = 'up'\n", "metrics.temperature.bad", '"high" or "low"'),
    ("[metrics.temperature]\nscale = [90, 30]\n", "metrics.temperature.scale", "low < high"),
    ("[demo]\nnodes = 0\n", "demo.nodes", "between 1"),
    ("[demo]\ngpus_per_node = 2.5\n", "demo.gpus_per_node", "whole number"),
    ("[metrics]\ntemperature = 3\n", "metrics.temperature", "must be a table"),
])
def test_errors_name_the_file_the_key_and_the_problem(tmp_path, text, key, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert str(path) in message
    assert key in message
    assert problem in message


def test_unreadable_files_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_settings(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(write(tmp_path, "[display\n"))
    bad_bytes = tmp_path / "bytes.toml"
    bad_bytes.write_bytes(b"\xff\xfe[display]")
    with pytest.raises(ConfigError):
        load_settings(bad_bytes)


def test_environment_variables_set_keys_and_flags_beat_them(tmp_path):
    environ = {"RANKTOP_PROMETHEUS_URL": "http://env:9090", "RANKTOP_JOB": "from-env",
               "RANKTOP_REFRESH_SECONDS": "5", "RANKTOP_INSECURE": "yes"}
    settings = load_settings(environ=environ)
    assert settings.prometheus.url == "http://env:9090"
    assert settings.prometheus.job == "from-env"
    assert settings.refresh_seconds == 5
    assert settings.prometheus.insecure is True
    flagged = load_settings(overrides={"prometheus": {"job": "from-flag"}}, environ=environ)
    assert flagged.prometheus.job == "from-flag"


def test_errors_name_the_variable_or_flag_a_bad_value_came_from():
    with pytest.raises(ConfigError, match="environment variable RANKTOP_PROMETHEUS_URL"):
        load_settings(environ={"RANKTOP_PROMETHEUS_URL": "prom:9090"})
    with pytest.raises(ConfigError, match="RANKTOP_INSECURE: must be true or false"):
        load_settings(environ={"RANKTOP_INSECURE": "maybe"})
    with pytest.raises(ConfigError, match=r"--prometheus: prometheus\.url"):
        load_settings(overrides={"prometheus": {"url": "ftp://x"}}, environ={},
                      flag_names={"prometheus.url": "--prometheus"})


def test_secrets_come_from_files_or_variables_and_never_print(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    path = write(tmp_path, f'[prometheus]\nbearer_token_file = "{token}"\nusername = "me"\n')
    settings = load_settings(path, environ={"RANKTOP_PASSWORD": "hunter2"})
    assert settings.prometheus.bearer_token.value == "s3cret-token"
    assert settings.prometheus.password.value == "hunter2"
    shown = repr(settings) + str(settings.prometheus)
    assert "s3cret-token" not in shown and "hunter2" not in shown
    assert "***" in shown


def test_a_missing_secret_or_ca_file_is_named(tmp_path):
    path = write(tmp_path, '[prometheus]\nca_bundle = "/nonexistent/ca.pem"\n')
    with pytest.raises(ConfigError, match=r"prometheus\.ca_bundle: no such file"):
        load_settings(path, environ={})


def test_slurm_node_list_defaults_to_the_job_environment():
    settings = load_settings(environ={"SLURM_JOB_NODELIST": "gpu-[01-04]"})
    assert settings.ranks.slurm_nodelist == "gpu-[01-04]"


def test_an_unknown_key_is_named_with_a_suggestion(tmp_path):
    path = write(tmp_path, '[prometheus]\nulr = "http://x:9090"\n')
    with pytest.raises(ConfigError, match=r"prometheus\.ulr: unknown key \(did you mean .url.\?\)"):
        load_settings(path, environ={})
    with pytest.raises(ConfigError, match="nonsense: unknown key"):
        load_settings(write(tmp_path, "nonsense = 1\n"), environ={})


def test_a_new_metric_may_use_any_metric_key(tmp_path):
    path = write(tmp_path, '[metrics.pcie]\ntitle = "PCIe"\nbad = "low"\nunit = "B/s"\n'
                           'promql = "DCGM_FI_PROF_PCIE_TX_BYTES{dcgm}"\n')
    assert load_settings(path, environ={}).metrics["pcie"].queries[0].promql.startswith("DCGM")


@pytest.mark.parametrize("name", ["slurm.toml", "kubernetes.toml"])
def test_the_example_configs_use_only_known_keys(name):
    from ranktop.tui.settings.paths import shipped_config_dir
    from ranktop.tui.settings.reader import check_known_keys, read_toml

    defaults = read_toml(shipped_config_dir() / "default.toml")
    example = shipped_config_dir() / "examples" / name
    check_known_keys(read_toml(example), defaults, example)


def test_backend_settings_a_tenant_and_victoria_metrics_latency_offset(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[prometheus]\ntenant = "team-a"\nlatency_offset = "500ms"\n')
    prom = load_settings(path, environ={}).prometheus
    assert (prom.tenant, prom.latency_offset) == ("team-a", "500ms")
    from_env = load_settings(environ={"RANKTOP_TENANT": "t", "RANKTOP_LATENCY_OFFSET": "1s"})
    assert (from_env.prometheus.tenant, from_env.prometheus.latency_offset) == ("t", "1s")


@pytest.mark.parametrize("line,says", [
    ('latency_offset = "soon"', 'prometheus.latency_offset: must be a duration such as "1s"'),
    ('latency_offset = "-1s"', "prometheus.latency_offset: must be a duration"),
    ('tenant = "a\\r\\nX-Evil: 1"', "prometheus.tenant: must not hold control characters"),
])
def test_bad_backend_settings_are_refused_with_their_key(tmp_path, line, says):
    path = tmp_path / "c.toml"
    path.write_text(f"[prometheus]\n{line}\n")
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_settings(path, environ={})


def test_layout_parallelism_is_read_and_bad_values_name_the_key(tmp_path):
    settings = load_settings(write(tmp_path, '[layout]\nparallelism = "tp=8, pp=4"\n'))
    assert settings.layout.parallelism.stages == 4 and settings.layout.view == "node"
    for text, says in [
        ('parallelism = "tp=8,pp=four"', "layout.parallelism: pp=four: the size must be"),
        ('parallelism = "tp=8"\norder = "tp-dp-pp"', "layout.order: order 'tp-dp-pp' must name"),
        ('view = "parallelism"', "layout.view: is \"parallelism\" but parallelism is not given"),
        ('parallelism = "tp=8"\nview = "stages"', 'layout.view: must be "node" or "parallelism"'),
    ]:
        with pytest.raises(ConfigError, match=re.escape(says)):
            load_settings(write(tmp_path, f"[layout]\n{text}\n"))


def test_the_checkpoint_pattern_and_metric_are_read_and_a_bad_pattern_names_its_key(tmp_path):
    assert load_settings(environ={}).job_metrics["checkpoint_step"] == \
        "max(training_checkpoint_step{job})"
    own = r'checkpoint_pattern = "ckpt iter=(?P<step>\\d+)"'
    assert load_settings(write(tmp_path, f"[logs]\n{own}\n"), environ={}) \
        .checkpoint_pattern == r"ckpt iter=(?P<step>\d+)"
    for text, says in [
        (r'checkpoint_pattern = "ckpt (?P<step>\\d+"',
         "logs.checkpoint_pattern: not a regular expression: missing ), unterminated"),
        (r'checkpoint_pattern = "ckpt (\\d+)"',
         "logs.checkpoint_pattern: needs a named group (?P<step>...)"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(says)) as caught:
            load_settings(write(tmp_path, f"[logs]\n{text}\n"), environ={})
        assert "\n" not in str(caught.value)

"""Loading scenario files: the shipped one, and every kind of bad one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ranktop.tui.simulator import scenario as scenario_module
from ranktop.tui.simulator.scenario import EFFECTS, Fault, ScenarioError, load_scenario

SHIPPED = Path(__file__).resolve().parents[3] / "config" / "scenario.toml"

HEADER = """
name = "test-job"
loop_seconds = 100
base_step_seconds = 1.0
tokens_per_step = 1000
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    return path


def fault(body: str) -> str:
    return HEADER + "\n[[fault]]\n" + body


def test_shipped_scenario_loads_with_every_effect() -> None:
    scenario = load_scenario(SHIPPED)
    assert scenario.name == "llama-70b-pretrain"
    assert scenario.loop_seconds == 300
    assert scenario.base_step_seconds == pytest.approx(1.12)
    assert scenario.tokens_per_step == 4194304
    # The demo's hang is a rank dying; a hang a live rank causes is for scripted cases.
    stragglers = load_scenario(SHIPPED.parent / "stragglers.toml")
    assert stragglers.parallelism == "tp=8,pp=4"
    shipped = {f.effect for f in (*scenario.faults, *stragglers.faults)}
    assert shipped == set(EFFECTS) - {"collective_hang"}
    assert scenario.faults[0] == Fault("thermal_throttle", 37, 6.0, 60.0, {})
    assert min(f.start for f in scenario.faults) < 10  # a first-time user sees a fault soon
    xid = next(f for f in scenario.faults if f.effect == "xid")
    assert xid.params == {"code": 79}
    assert [f.rank for f in scenario.faults if f.effect in ("job_stall", "loss_divergence")] == [
        None, None,
    ]


@pytest.mark.parametrize(("text", "says"), [
    (fault('effect = "stage_imbalance"\nstart = 1\nduration = 2'),
     "parallelism: stage_imbalance needs the job's parallelism"),
    ('parallelism = "tp=eight"\n' + HEADER, "parallelism: tp=eight: the size must be"),
])
def test_stage_and_replica_faults_need_a_valid_parallelism(tmp_path, text, says) -> None:
    with pytest.raises(ScenarioError, match=says):
        load_scenario(write(tmp_path, text))


def test_default_path_is_the_shipped_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_module, "shipped_config_dir", lambda: SHIPPED.parent)
    assert load_scenario() == load_scenario(SHIPPED)


def test_missing_params_take_their_defaults(tmp_path: Path) -> None:
    text = fault('effect = "straggler"\nrank = 3\nstart = 1\nduration = 2\n') + (
        '\n[[fault]]\neffect = "nvlink_drop"\nrank = 0\nstart = 5\nduration = 5\nfactor = 0.5\n'
    )
    faults = load_scenario(write(tmp_path, text)).faults
    assert faults[0].params == {"factor": 1.45}
    assert faults[1].params == {"factor": 0.5}


def test_hang_params_and_their_defaults(tmp_path: Path) -> None:
    text = fault('effect = "rank_death"\nrank = 3\nstart = 1\nduration = 2\n') + (
        '\n[[fault]]\neffect = "collective_hang"\nrank = 0\nstart = 5\nduration = 5\n'
        'cause = "mismatch"\ndumps = "json"\n'
        '\n[[fault]]\neffect = "collective_hang"\nrank = 0\nstart = 5\nduration = 5\n')
    faults = load_scenario(write(tmp_path, text)).faults
    assert [f.params for f in faults] == [
        {"dumps": "pickle", "others_step": 0.0}, {"cause": "mismatch", "dumps": "json"},
        {"cause": "missing", "dumps": "pickle"}]
    bad = fault('effect = "collective_hang"\nrank = 0\nstart = 1\nduration = 2\n'
                'cause = "cosmic ray"\n')
    with pytest.raises(ScenarioError, match=r'fault\[0\]\.cause: must be "missing" or'):
        load_scenario(write(tmp_path, bad))


def test_log_rotation_and_ecc_params(tmp_path: Path) -> None:
    text = fault('effect = "log_rotation"\nrank = 3\nstart = 1\nduration = 2\n') + (
        '\n[[fault]]\neffect = "log_rotation"\nrank = 0\nstart = 5\nduration = 5\n'
        'mode = "rename"\nnodes = 3\n'
        '\n[[fault]]\neffect = "ecc_dbe"\nrank = 0\nstart = 5\nduration = 5\n'
        'remap_failure = true\n')
    faults = load_scenario(write(tmp_path, text)).faults
    assert faults[0].params == {"mode": "copytruncate", "nodes": 1}
    assert faults[1].params == {"mode": "rename", "nodes": 3}
    assert faults[2].params == {"remap_failure": True}


def test_shipped_faults_overlap_and_rotate_logs_during_the_hang() -> None:
    faults = load_scenario(SHIPPED).faults
    death = next(f for f in faults if f.effect == "rank_death")
    during = {f.effect for f in faults if f.active_at(death.start)}
    assert {"straggler", "nvlink_drop", "xid"} <= during
    rotations = [f for f in faults if f.effect == "log_rotation"]
    assert {f.params["mode"] for f in rotations} == {"copytruncate", "rename"}
    assert all(death.start < f.start and f.end <= death.end for f in rotations)


def test_a_scenario_without_faults_is_fine(tmp_path: Path) -> None:
    assert load_scenario(write(tmp_path, HEADER)).faults == ()


BAD_FILES = [
    # (file text, key the message must name, words the message must contain)
    (fault('effect = "meltdown"\nrank = 1\nstart = 1\nduration = 2'),
     "fault[0].effect", "unknown effect 'meltdown'"),
    (fault('effect = "straggler"\nrank = 1\nstart = 1\nduration = -5'),
     "fault[0].duration", "got -5"),
    (fault('effect = "straggler"\nrank = 1\nstart = 150\nduration = 5'),
     "fault[0].start", "past the loop end"),
    (fault('effect = "straggler"\nrank = 1\nstart = 90\nduration = 20'),
     "fault[0].duration", "ends at 110, past the loop end"),
    (fault('effect = "straggler"\nrank = 1\nstart = 1'),
     "fault[0].duration", "missing key"),
    (fault('effect = "straggler"\nstart = 1\nduration = 2'),
     "fault[0].rank", "missing key"),
    (fault('rank = 1\nstart = 1\nduration = 2'),
     "fault[0].effect", "missing key"),
    (fault('effect = "job_stall"\nrank = 4\nstart = 1\nduration = 2'),
     "fault[0].rank", "whole job"),
    (fault('effect = "ecc_dbe"\nrank = -1\nstart = 1\nduration = 2'),
     "fault[0].rank", "whole number >= 0"),
    (fault('effect = "straggler"\nrank = 1\nstart = 1\nduration = 2\nfactor = 0'),
     "fault[0].factor", "a number > 0"),
    (fault('effect = "xid"\nrank = 1\nstart = 1\nduration = 2\ncode = "seventy-nine"'),
     "fault[0].code", "whole number > 0"),
    (fault('effect = "xid"\nrank = 1\nstart = 1\nduration = 2\nfactr = 2'),
     "fault[0].factr", "unknown key"),
    (fault('effect = "straggler"\nrank = 1\nstart = "soon"\nduration = 2'),
     "fault[0].start", "must be a number"),
    (fault('effect = "log_rotation"\nrank = 1\nstart = 1\nduration = 2\nmode = "delete"'),
     "fault[0].mode", '"copytruncate" or "rename", got \'delete\''),
    (fault('effect = "log_rotation"\nrank = 1\nstart = 1\nduration = 2\nnodes = 0'),
     "fault[0].nodes", "whole number > 0"),
    (fault('effect = "log_rotation"\nstart = 1\nduration = 2'),
     "fault[0].rank", "missing key"),
    (fault('effect = "ecc_dbe"\nrank = 1\nstart = 1\nduration = 2\nremap_failure = "yes"'),
     "fault[0].remap_failure", "true or false"),
    (HEADER.replace("name = \"test-job\"", ""), "name", "missing key"),
    (HEADER.replace("= 100\n", "= nan\n"), "loop_seconds", "finite number > 0"),
    (HEADER.replace("= 1000", "= 1000.5"), "tokens_per_step", "whole number > 0"),
    (HEADER + "loop_second = 3\n", "loop_second", "did you mean 'loop_seconds'"),
    (HEADER + "fault = 3\n", "fault", "list of [[fault]] tables"),
    (HEADER + "checkpoint_every_steps = 0\n", "checkpoint_every_steps", "whole number > 0"),
    (HEADER + "checkpoint_every_steps = 2.5\n", "checkpoint_every_steps", "got 2.5"),
    (HEADER + "[fault]\neffect = 'xid'\n", "fault", "list of [[fault]] tables"),
]


@pytest.mark.parametrize(("text", "key", "words"), BAD_FILES)
def test_bad_files_name_the_file_key_and_problem(
    tmp_path: Path, text: str, key: str, words: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert words in message


def test_the_second_fault_is_named_by_its_index(tmp_path: Path) -> None:
    good = 'effect = "ecc_dbe"\nrank = 1\nstart = 1\nduration = 2\n'
    text = fault(good) + '\n[[fault]]\neffect = "ecc_dbe"\nrank = 1\nstart = 1\n'
    with pytest.raises(ScenarioError, match=r"fault\[1\]\.duration: missing key"):
        load_scenario(write(tmp_path, text))


def test_toml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "[[fault]]\neffect = \n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(path) in str(caught.value)
    assert "not valid TOML" in str(caught.value)
    assert "line 7" in str(caught.value)


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file"):
        load_scenario(tmp_path / "nowhere.toml")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"name = \"\xff\xfe\"\n")
    with pytest.raises(ScenarioError, match="not valid UTF-8"):
        load_scenario(binary)


def test_a_scenario_that_is_no_regular_file_is_refused_without_reading_it(tmp_path: Path):
    """Read as the settings are: a FIFO would block for ever, /dev/zero never end."""
    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    with pytest.raises(ScenarioError, match=str(fifo)):
        load_scenario(fifo)
    with pytest.raises(ScenarioError, match="/dev/zero"):
        load_scenario(Path("/dev/zero"))


def test_checkpoint_every_steps_defaults_to_a_hundred_and_can_be_set(tmp_path: Path) -> None:
    assert load_scenario(write(tmp_path, HEADER)).checkpoint_every_steps == 100
    assert load_scenario(write(tmp_path, HEADER + "checkpoint_every_steps = 50\n")
                         ).checkpoint_every_steps == 50

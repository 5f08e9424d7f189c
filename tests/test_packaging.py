"""The wheel: one import name, `ranktop`, carrying every module and shipped file, and an
installed copy that finds those files from any working directory.

The wheel is built offline from a copy of the sources (no build isolation, no index), then
installed with ``pip --target`` and imported by a Python started with ``-S``, so neither the
checkout nor the editable install can stand in for the installed copy.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ranktop.tui.settings.reader import read_toml

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = read_toml(ROOT / "pyproject.toml")
# Source folder -> where it lands in the installed tree.
FOLDERS = {"ranktop": "ranktop", "tui": "ranktop/tui", "widgets": "ranktop/widgets",
           "config": "ranktop/config"}
SHIPPED_SUFFIXES = {".py", ".toml", ".yml", ".tcss"}
NAMED = {
    "ranktop/config/default.toml", "ranktop/config/scenario.toml", "ranktop/tui/app/ranktop.tcss",
    "ranktop/config/prometheus/ranktop-alerts.yml",
    "ranktop/config/prometheus/ranktop-alerts.test.yml",
}

PROBE = """
import json
from importlib.metadata import entry_points
from pathlib import Path

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.paths import shipped_config_dir
from ranktop.tui.simulator.scenario import load_scenario
import ranktop.tui.app.console as app

shipped = shipped_config_dir()
settings = load_settings(environ={})
scenario = load_scenario()
script = entry_points(group="console_scripts", name="ranktop")
print(json.dumps({
    "app": app.__file__,
    "shipped": str(shipped),
    "files": sorted(str(p.relative_to(shipped)) for p in shipped.rglob("*") if p.is_file()),
    "css": str(Path(app.__file__).parent / RanktopApp.CSS_PATH),
    "maps": len(settings.maps),
    "scenario": scenario.name,
    "script": callable(next(iter(script)).load()),
}))
"""


def _shipped(path: Path) -> bool:
    return path.is_file() and path.suffix in SHIPPED_SUFFIXES and "__pycache__" not in path.parts


def source_files() -> set[str]:
    """Every file of the source folders that an install must carry, as installed paths."""
    found = set()
    for folder, installed in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            if _shipped(path):
                found.add(f"{installed}/{path.relative_to(ROOT / folder).as_posix()}")
    return found


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}",
                    pytrace=False)
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, source / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--wheel-dir", str(base / "dist"), str(source)])
    (built,) = (base / "dist").glob("ranktop-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("installed") / "site"
    run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--target", str(target), str(wheel)])
    return target


def names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_carries_every_module_and_shipped_file(wheel):
    expected = source_files()
    assert expected >= NAMED
    assert sorted(expected - names(wheel)) == []


def test_wheel_installs_one_import_name_and_no_data_files(wheel):
    contents = names(wheel)
    dist_info = f"ranktop-{PYPROJECT['project']['version']}.dist-info"
    assert {name.split("/")[0] for name in contents} == {"ranktop", dist_info}
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(f"{dist_info}/top_level.txt").decode().split() == ["ranktop"]
        scripts = archive.read(f"{dist_info}/entry_points.txt").decode()
    for script, target in PYPROJECT["project"]["scripts"].items():
        assert f"{script} = {target}" in scripts


def test_installed_copy_finds_its_shipped_files_from_another_directory(installed, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # -S: no .pth files, so the editable install of the checkout is out of the picture; the
    # dependencies come from this environment's site-packages, after the installed copy.
    path = [str(installed), *site.getsitepackages()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    result = run([sys.executable, "-S", "-c", PROBE], cwd=elsewhere, env=env)
    probe = json.loads(result.stdout.strip().splitlines()[-1])

    shipped = Path(probe["shipped"])
    assert shipped == installed / "ranktop" / "config"
    assert Path(probe["app"]).is_relative_to(installed)
    assert Path(probe["css"]).is_file()
    config_files = {name for name in source_files() if name.startswith(FOLDERS["config"] + "/")}
    wanted = {name.removeprefix(FOLDERS["config"] + "/") for name in config_files}
    present = {name for name in probe["files"] if Path(name).suffix in SHIPPED_SUFFIXES}
    assert wanted - present == set()
    assert probe["maps"] > 0
    assert probe["scenario"]
    assert probe["script"] is True

    for module in ("ranktop", "ranktop.tui"):
        version = run([sys.executable, "-S", "-m", module, "--version"], cwd=elsewhere, env=env)
        assert version.stdout.split() == ["ranktop", PYPROJECT["project"]["version"]]

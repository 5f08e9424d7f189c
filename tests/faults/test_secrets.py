"""Secrets never show: a bearer token and a basic-auth password, each from the environment
and from a file, and a password in the URL's ``user:password@``, against a server whose 401
page echoes the ``Authorization`` header back.

Looked for in every place a secret could leak to: what the console writes to the terminal
(through a pty), every file it leaves in its state folder (the event log, written here by
a confirmed anomaly, and crash files), `ranktop report` in text and JSON, and what ``ps``
shows of each process of ranktop's (its command line; and its environment too where the
secret came from a file, so a secret read from a file is never handed on through one)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.conftest import JOB, RANKS
from tests.pty_console import PtyConsole

TOKEN = "tok-Zq81-secret"
USER = "oncall"
PASSWORD = "pw-Zq81-secret"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
WAYS = ["token-env", "token-file", "password-env", "password-file", "password-url"]


def credentials(way: str, folder: Path) -> tuple[dict[str, str], list[str]]:
    """The environment that gives ranktop the secret ``way`` says, and the forms of it
    that must never show (the secret itself, and as sent in a header)."""
    secret = TOKEN if way.startswith("token") else PASSWORD
    forms = [TOKEN] if way.startswith("token") else [PASSWORD, BASIC]
    variable = "RANKTOP_BEARER_TOKEN" if way.startswith("token") else "RANKTOP_PASSWORD"
    env = {} if way.startswith("token") else {"RANKTOP_USERNAME": USER}
    if way.endswith("url"):
        return {}, forms
    if way.endswith("file"):
        kept = folder / "secret"
        kept.write_text(secret + "\n")
        env[variable + "_FILE"] = str(kept)
    else:
        env[variable] = secret
    return env, forms


def url_for(way: str, url: str) -> str:
    """The Prometheus URL as the user gives it: with ``user:password@`` for that way."""
    return url.replace("://", f"://{USER}:{PASSWORD}@") if way.endswith("url") else url


def in_ps(way: str, forms: list[str]) -> list[str]:
    """The forms ``ps`` must not show: a URL given as a flag is in it like any argument
    (the README says so), the header made of it is not."""
    return [BASIC] if way.endswith("url") else forms


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo += parents.get(found[-1], [])
    return found


def what_ps_shows(pid: int, environment: bool) -> str:
    """``ps -ef`` now, and the command line (and environment) of ``pid`` and its children."""
    shown = [subprocess.run(["ps", "-ef"], capture_output=True, text=True).stdout]
    for each in descendants(pid):
        parts = ["cmdline", "environ"] if environment else ["cmdline"]
        for part in parts:
            with contextlib.suppress(OSError):  # it has ended meanwhile
                shown.append(Path(f"/proc/{each}/{part}").read_bytes().decode(errors="replace"))
    return "\n".join(shown)


def assert_no_secret(text: str, forms: list[str], where: str) -> None:
    leaked = [form for form in forms if form in text]
    assert not leaked, f"{leaked} in {where}"


@pytest.mark.parametrize("way", WAYS)
def test_the_console_shows_no_secret_on_screen_in_its_files_or_in_ps(proxy, tmp_path, way):
    env, forms = credentials(way, tmp_path)
    state = tmp_path / "state"
    proxy.set("hw-thermal")  # a confirmed anomaly: the event log is written
    console = PtyConsole.ranktop("--prometheus", url_for(way, proxy.url), "--job", JOB,
                                 "--refresh", "1", size=(250, 50),
                                 env={**env, "XDG_STATE_HOME": str(state)})
    events = state / "ranktop" / "events.jsonl"
    shown = []
    try:
        assert console.wait_for(f"ranks {RANKS}/{RANKS} up"), console.text()[-2000:]
        shown.append(what_ps_shows(console.process.pid, way.endswith("file")))
        deadline = time.monotonic() + 30
        while not (events.exists() and events.stat().st_size) and time.monotonic() < deadline:
            console.read(0.5)
        proxy.set("echo-auth")
        # the echoing page shown (wide enough not to be cut), cleaned
        assert console.wait_for("is not welcome here"), console.text()[-2000:]
        shown.append(what_ps_shows(console.process.pid, way.endswith("file")))
        console.send("\x03", pause=0.5)
        status, _ = console.finish()
    finally:
        console.close()
    assert status == 0
    assert_no_secret(bytes(console.output).decode("utf-8", "replace"), forms, "the terminal")
    assert_no_secret("\n".join(shown), in_ps(way, forms), "ps")
    assert b'"kind": "thermal"' in events.read_bytes()  # there was something to leak into
    for kept in state.rglob("*"):
        if kept.is_file():
            assert_no_secret(kept.read_text(errors="replace"), forms, str(kept))


@pytest.mark.parametrize("way", WAYS)
def test_report_shows_no_secret_in_text_json_or_ps(proxy, tmp_path, way):
    env, forms = credentials(way, tmp_path)
    proxy.set("echo-auth")
    for output in (["--json"], []):
        running = subprocess.Popen(
            [sys.executable, "-m", "ranktop", "report", "--prometheus", url_for(way, proxy.url),
             "--job", JOB, "--duration", "1.5", "--refresh", "0.5", *output],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **env, "XDG_STATE_HOME": str(tmp_path / "state")})
        shown = []
        while running.poll() is None:
            shown.append(what_ps_shows(running.pid, way.endswith("file")))
            time.sleep(0.2)
        out, err = running.communicate(timeout=60)
        assert running.returncode == 1, err
        assert_no_secret(out + err, forms, f"report {' '.join(output)}")
        assert_no_secret("\n".join(shown), in_ps(way, forms), "ps")
        message = json.loads(out)["source"]["message"] if output else out
        assert "HTTP 401" in message and "is not welcome here" in message


def bundle_files(folder: Path) -> dict[str, bytes]:
    """Every file of every bundle in ``folder``, those inside a .tar.gz included."""
    import tarfile

    found = {}
    for path in folder.rglob("*"):
        if path.name.endswith(".tar.gz"):
            with tarfile.open(path) as tar:
                for member in tar.getmembers():
                    if member.isfile():
                        found[member.name] = tar.extractfile(member).read()
        elif path.is_file():
            found[str(path)] = path.read_bytes()
    return found


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("fault", ["hw-thermal", "echo-auth"])
def test_a_bundle_holds_no_secret_in_any_file(proxy, tmp_path, way, fault):
    env, forms = credentials(way, tmp_path)
    proxy.set(fault)  # a confirmed anomaly to hand over; a 401 page echoing the header
    packed = way == "token-file"  # the same, inside one .tar.gz
    config = tmp_path / "config.toml"
    config.write_text('[bundle]\nformat = "tar.gz"\n' if packed else "")
    finished = subprocess.run(
        [sys.executable, "-m", "ranktop", "report", "--prometheus", url_for(way, proxy.url),
         "--job", JOB, "--duration", "1", "--refresh", "0.5", "--config", str(config),
         "--bundle", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, **env, "XDG_STATE_HOME": str(tmp_path / "state")})
    assert "bundle written" in finished.stderr, finished.stderr
    files = bundle_files(tmp_path / "out")
    names = {Path(name).name for name in files}
    assert {"analysis.json", "queries.json", "settings.json", "console.msgpack"} <= names
    for name, content in files.items():
        assert_no_secret(content.decode("utf-8", "replace"), forms, name)
    queries = json.loads(next(c for n, c in files.items() if n.endswith("queries.json")))
    assert queries["backend"].startswith("http") and queries["queries"]
    settings = json.loads(next(c for n, c in files.items() if n.endswith("settings.json")))
    assert settings["prometheus"]["bearer_token" if way.startswith("token") else "password"
                                  ] == "***"

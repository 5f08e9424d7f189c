"""A recorded incident served again: its files laid out with their times, a Prometheus on
its data folder (``python -m bench.realjob check`` and the recorded-incident tests)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.integration.cluster import free_port, wait_for


@dataclass(frozen=True)
class Replay:
    """An incident laid out in ``folder``, its data served at ``url``."""

    folder: Path
    url: str
    truth: dict

    @property
    def logs(self) -> Path:
        return self.folder / "logs"

    @property
    def dumps(self) -> Path:
        return self.folder / "fr"


def unpack(recording: Path, folder: Path) -> dict:
    """The recording's files in ``folder`` with their recorded modification times."""
    with tarfile.open(recording / "incident.tar.gz") as tar:
        tar.extractall(folder, filter="data")
    return json.loads((recording / "truth.json").read_text())


@contextmanager
def replayed(recording: Path, folder: Path) -> Iterator[Replay]:
    """A Prometheus serving the recorded data folder (scraping nothing) while in use."""
    truth = unpack(recording, folder)
    config = folder / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    binary = shutil.which("prometheus") or "prometheus"
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'prometheus'}",
         f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200,
                 "the replayed Prometheus", 60)
        yield Replay(folder, url, truth)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

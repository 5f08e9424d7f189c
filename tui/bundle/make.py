"""One bundle, made: gather from the engine, write the documents, put them on disk.

The files (each written whole, readable by whom ``[bundle] mode`` says):
- ``README.txt``: one line, what it is and how to reopen it;
- ``screen.svg`` and ``screen.txt``: the screen as the user saw it, colours included;
- ``analysis.json``: the verdicts and their evidence (``core/document.py``'s schema);
- ``queries.json``: the poll's queries, each as an instant query at the moment;
- ``settings.json``: the settings as used, every secret shown as ***;
- ``console.msgpack``: what ``ranktop open`` shows (``saved.py``)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.document import bundle_part, document
from ..core.findings import Findings
from ..core.moment import shown_full
from ..engine.client import EngineClient
from ..engine.snapshot import Snapshot
from ..settings.config import Settings
from .gather import gather
from .redact import (
    queries_document,
    scrubbed,
    secrets_of,
    settings_document,
)
from .saved import Saved, cleared, encoded
from .write import PACKED_SUFFIX, SUFFIX, bundle_name, write_bundle


@dataclass(frozen=True)
class Screen:
    """The screen as captured on the UI's thread ("" when there is none: a report)."""

    svg: str = ""
    text: str = ""


async def make_bundle(engine: EngineClient, settings: Settings, snapshot: Snapshot,
                      selected: int | None, screen: Screen, folder: Path | None = None,
                      findings: Findings | None = None) -> Path:
    """Write the bundle of ``snapshot`` into ``folder`` (else the configured one, else the
    current directory); its path. ``findings``: a report's, with what it saw resolve."""
    written = time.time()
    secrets = secrets_of(settings)
    saved = await gather(engine, snapshot, selected, written, secrets)
    queries = await asyncio.to_thread(_queries, engine)
    files = await asyncio.to_thread(_files, saved, settings, screen, queries, findings, secrets)
    target = folder or settings.bundle.folder or Path.cwd()
    name = bundle_name(saved.job, saved.moment)
    return await asyncio.to_thread(write_bundle, target, name, files,
                                   settings.bundle.packed, settings.bundle.mode)


def _queries(engine: EngineClient) -> dict[str, str]:
    try:
        return engine.queries()
    except Exception:  # a bundle is written with what could be had
        return {}


def _files(saved: Saved, settings: Settings, screen: Screen, queries: dict[str, str],
           findings: Findings | None, secrets: list[str]) -> dict[str, bytes]:
    snapshot = saved.snapshot
    findings = findings or Findings(saved.job, snapshot.analysis, error=snapshot.error,
                                    stall_hold=settings.detect.job_stall_seconds,
                                    at=snapshot.at)
    found = {**document(findings, settings.metrics,
                        [*settings.maps, settings.step_alternate], saved.ranktop),
             **bundle_part(findings, settings.maps,
                           {r: s.alerts for r, s in saved.ranks.items()},
                           _excerpts(saved))}
    texts = {
        "README.txt": _readme(saved, settings),
        "analysis.json": _json(found),
        "queries.json": _json(queries_document(settings, queries, saved.moment)),
        "settings.json": _json(settings_document(settings)),
    }
    if screen.svg:
        texts["screen.svg"] = screen.svg
    if screen.text:
        texts["screen.txt"] = screen.text
    files = {name: scrubbed(text, secrets).encode() for name, text in texts.items()}
    files["console.msgpack"] = _console(saved, secrets)
    return files


def _excerpts(saved: Saved) -> list[dict]:
    return [{"rank": rank, "file": log.name, "ends_at_byte": dict(log.sizes),
             "lines": [line.text for line in log.lines]}
            for rank, kept in sorted(saved.ranks.items()) for log in kept.logs]


def _readme(saved: Saved, settings: Settings) -> str:
    when = shown_full(saved.moment)
    live = "live then" if saved.snapshot.at is None else "a past moment replayed"
    kind = PACKED_SUFFIX if settings.bundle.packed else SUFFIX
    return (f"ranktop bundle of job {saved.job} at {when} ({live}), written by ranktop "
            f"{saved.ranktop}: reopen it with `ranktop open <this {kind}>`; analysis.json "
            "holds the verdicts and their evidence, screen.svg and screen.txt the screen. "
            "Each rank's alerts are those of the hour before this moment (any that began "
            "after it are left out); its log tail reaches back, into rotated files too, to "
            "when its trouble began.\n")


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _console(saved: Saved, secrets: list[str]) -> bytes:
    """``saved`` encoded; if a secret shows anywhere in it (a status line, a label), encoded
    again with every text cleared of secrets."""
    data = encoded(saved)
    if not any(secret.encode() in data for secret in secrets):
        return data
    return encoded(cleared(saved, lambda text: scrubbed(text, secrets)))

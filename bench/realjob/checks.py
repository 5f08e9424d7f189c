"""ranktop's verdicts on a recorded real incident, held against the rig's truth.

Each check runs ``ranktop report --at <fault + offset> --json`` against the replayed
Prometheus, with the incident's logs (``torchrun:``) and Flight Recorder dumps, and judges
the answer. A check that names an ``issue`` is a verdict that is known wrong today and that
issue is to make right: ``check`` prints it as such, the tests expect it to fail until then.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.realjob.replay import Replay, replayed

Report = dict
_TOGETHER = re.compile(r"ranks ([\d, ]+) went down together")
Judge = Callable[[Report, dict], tuple[bool, str]]


@dataclass(frozen=True)
class Check:
    name: str
    offset: float  # seconds after the fault
    judge: Judge
    issue: int | None = None  # the open issue that makes it right; None: right today


def report_at(replay: Replay, at: float | None, timeout: float = 240) -> Report:
    """``ranktop report --json`` at ``at`` (Unix seconds; None: live, long after the
    recorded job ended) on the replayed incident."""
    moment = [] if at is None else ["--at", f"{at:.3f}"]
    command = [sys.executable, "-m", "ranktop", "report", "--json",
               "--prometheus", replay.url, "--job", replay.truth["job"], *moment,
               "--logs", f"torchrun:{replay.logs}",
               "--flight-recorder", f"{replay.dumps}/rank_"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env={"XDG_CONFIG_HOME": str(replay.folder / "xdg"),
                               "PATH": "/usr/bin:/bin", "HOME": str(replay.folder)})
    if done.returncode not in (0, 1):
        raise RuntimeError(f"report exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def _missing(report: Report, truth: dict) -> tuple[bool, str]:
    missing = report["ranks"]["missing"]
    return truth["rank"] in missing, f"missing {missing}"


def _alone_as_root(report: Report, truth: dict) -> tuple[bool, str]:
    roots = sorted({a["rank"] for a in report["anomalies"] if a["explained_by"] is None
                    and a["rank"] is not None})
    return roots == [truth["rank"]], f"roots {roots}"


def _all_up(report: Report, truth: dict) -> tuple[bool, str]:
    ranks = report["ranks"]
    return ranks["up"] == truth["world"], f"{ranks['up']} of {ranks['total']} up"


def _gone_together(summary: str) -> set[int]:
    found = _TOGETHER.search(summary)
    return {int(rank) for rank in found.group(1).split(", ")} if found else set()


def _restart_on_record(report: Report, truth: dict) -> tuple[bool, str]:
    """A resolved entry of its own for the restart, naming the dead rank as who died, or,
    where the evidence came too late to tell the ranks its agent took down with it apart
    (the hang triage is asynchronous), claiming none and listing it among them."""
    restarts = [a for a in report["resolved"] if a["kind"] == "restart"]
    right = any(a["rank"] == truth["rank"]
                or (a["rank"] is None and truth["rank"] in _gone_together(a["summary"]))
                for a in restarts)
    return right, " | ".join(a["summary"] for a in restarts)[:160] or "no restart on record"


def _hang_culprit(report: Report, truth: dict) -> tuple[bool, str]:
    hang = report["hang"]
    if hang is None:
        return False, "no hang verdict"
    return hang["culprits"] == [truth["rank"]], f"culprits {hang['culprits']}: " \
        f"{hang['summary'][:100]}"


def _timeouts_read(report: Report, truth: dict) -> tuple[bool, str]:
    """The peers' gloo timeouts, logged in the attempt the hang happened in, are evidence."""
    evidence = (report["hang"] or {}).get("evidence", {})
    timed_out = sorted(int(rank) for rank, lines in evidence.items()
                       if any("Timed out waiting" in line for line in lines))
    return len(timed_out) >= truth["world"] // 2, f"timeouts read for ranks {timed_out}"


def _flight_recorder_culprit(report: Report, truth: dict) -> tuple[bool, str]:
    hang = report["hang"] or {}
    flight = hang.get("flight_recorder") or {}
    culprits = flight.get("culprits", [])
    return culprits == [truth["rank"]], f"Flight Recorder: {json.dumps(flight)[:160]}"


def _anomaly_on_rank(kind: str) -> Judge:
    def judge(report: Report, truth: dict) -> tuple[bool, str]:
        kinds = [(a["kind"], a["rank"], a["state"]) for a in report["anomalies"]]
        return (kind, truth["rank"], "confirmed") in kinds, f"anomalies {kinds[:6]}"

    return judge


def _job_anomaly(kind: str, wanted: bool) -> Judge:
    def judge(report: Report, truth: dict) -> tuple[bool, str]:
        found = [a["summary"] for a in report["anomalies"] if a["kind"] == kind]
        return bool(found) == wanted, f"{kind}: {found[:2] or 'none'}"

    return judge


def _held_since_the_fault(kind: str, within: float) -> Judge:
    """One anomaly of the whole job, held since ``within`` seconds of the fault."""
    def judge(report: Report, truth: dict) -> tuple[bool, str]:
        since = [a["since"] - truth["at"] for a in report["anomalies"] if a["kind"] == kind]
        return len(since) == 1 and since[0] <= within, \
            f"{kind} since {', '.join(f'{s:+.0f} s' for s in since) or 'never'}"

    return judge


CHECKS: dict[str, list[Check]] = {
    "death": [
        Check("the dead rank is missing", 8, _missing),
        Check("the dead rank alone is the root", 8, _alone_as_root),
        Check("every rank steps again after the restart", 60, _all_up),
        Check("the restart is on record", 60, _restart_on_record),
    ],
    "frozen": [
        Check("the frozen rank is the hang's only culprit", 20, _hang_culprit),
        Check("still the only culprit after its peers' timeouts", 90, _hang_culprit),
        Check("the peers' timeouts are read from their logs", 90, _timeouts_read),
        Check("the Flight Recorder names the frozen rank", 90, _flight_recorder_culprit),
    ],
    "straggler": [
        Check("the slow rank is a confirmed straggler", 40, _anomaly_on_rank("straggler")),
    ],
    "spike": [
        Check("no loss alarm in the healthy minute before", -5, _job_anomaly("loss", False)),
        Check("the loss spike is an anomaly", 20, _job_anomaly("loss", True)),
        Check("one alarm held through the plateau", 55, _held_since_the_fault("loss", 15)),
    ],
}


def judge_recording(replay: Replay) -> list[tuple[Check, bool, str]]:
    """Each check of the incident's fault, with its outcome and what ranktop said."""
    outcomes = []
    for check in CHECKS[replay.truth["fault"]]:
        report = report_at(replay, replay.truth["at"] + check.offset)
        right, said = check.judge(report, replay.truth)
        outcomes.append((check, right, said))
    return outcomes


def check_recording(recording: Path) -> bool:
    """Print each check's outcome; true when every check expected right today is."""
    with tempfile.TemporaryDirectory(prefix="realjob-replay-") as scratch, \
            replayed(recording, Path(scratch)) as replay:
        outcomes = judge_recording(replay)
    truth = replay.truth
    print(f"{recording.name}: {truth['fault']} on rank {truth['rank']} ({truth['host']})")
    for check, right, said in outcomes:
        mark = "right" if right else (f"WRONG (issue {check.issue})" if check.issue
                                      else "WRONG")
        print(f"  {check.offset:+5.0f} s  {mark:<16} {check.name}: {said}")
    return all(right for check, right, _ in outcomes if check.issue is None)

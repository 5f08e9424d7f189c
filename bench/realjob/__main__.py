"""``python -m bench.realjob``: run the real job through one fault, record it, check it.

    python -m bench.realjob run --fault death [--rank 2] [--record NAME]
    python -m bench.realjob check tests/recordings/NAME

``run`` needs the ``realjob`` extra (torch, prometheus_client) and Debian's prometheus;
``check`` needs only ranktop and prometheus: it is what CI does with each recording.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

RECORDINGS = Path(__file__).resolve().parents[2] / "tests" / "recordings"


def _run(options: argparse.Namespace) -> int:
    from bench.realjob.checks import check_recording
    from bench.realjob.record import record
    from bench.realjob.rig import run

    folder = Path(options.folder or tempfile.mkdtemp(prefix="realjob-"))
    truth = run(folder, options.fault, options.rank, options.calm)
    print(f"the incident's files: {folder}")
    destination = RECORDINGS / options.record if options.record else folder / "recording"
    archive = record(folder, destination)
    print(f"recorded: {archive} ({archive.stat().st_size / 1e6:.2f} MB)")
    print(f"truth: {truth}")
    return 0 if check_recording(destination) else 1


def _check(options: argparse.Namespace) -> int:
    from bench.realjob.checks import check_recording

    return 0 if check_recording(Path(options.recording)) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realjob")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the real job through one fault")
    run.add_argument("--fault", required=True, choices=["death", "frozen", "straggler", "spike"])
    run.add_argument("--rank", type=int, default=2)
    run.add_argument("--calm", type=float, default=60.0,
                     help="seconds of healthy training before the fault (default 60)")
    run.add_argument("--folder", help="where the run's files go (default: a new temporary folder)")
    run.add_argument("--record", metavar="NAME", help="keep the incident in tests/recordings/NAME")
    run.set_defaults(act=_run)
    check = commands.add_parser("check", help="check ranktop's verdicts on a recording")
    check.add_argument("recording")
    check.set_defaults(act=_check)
    options = parser.parse_args(argv)
    return options.act(options)


if __name__ == "__main__":
    sys.exit(main())

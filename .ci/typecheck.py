"""pyright (basic) over the package, against the findings written down as still open.

`.ci/pyright-open.json` lists, per file, how many findings of each rule are known and still
open; this fails on any finding beyond that list and on a listed one that is gone (so the
list only shrinks). Run from the repository root: `.venv/bin/python .ci/typecheck.py`;
`--write` rewrites the list from what pyright finds now.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPEN = ROOT / ".ci" / "pyright-open.json"
PYRIGHT = ROOT / ".venv" / "bin" / "pyright"


def findings() -> list[dict]:
    done = subprocess.run([str(PYRIGHT), "--outputjson"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    try:
        return json.loads(done.stdout)["generalDiagnostics"]
    except (json.JSONDecodeError, KeyError):
        sys.exit(f"pyright did not run: {done.stderr.strip() or done.stdout[:500]}")


def counted(found: list[dict]) -> dict[str, dict[str, int]]:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for finding in found:
        name = Path(finding["file"]).resolve().relative_to(ROOT).as_posix()
        counts[name][finding.get("rule", "error")] += 1
    return {name: dict(sorted(rules.items())) for name, rules in sorted(counts.items())}


def main() -> int:
    found = findings()
    now = counted(found)
    if sys.argv[1:] == ["--write"]:
        OPEN.write_text(json.dumps(now, indent=1) + "\n")
        print(f"{sum(map(sum, (r.values() for r in now.values())))} findings written down")
        return 0
    known = json.loads(OPEN.read_text()) if OPEN.exists() else {}
    new = [f for f in found if _over(f, now, known)]
    gone = [f"{name}: {rule}" for name, rules in known.items() for rule, n in rules.items()
            if now.get(name, {}).get(rule, 0) < n]
    for finding in new:
        start = finding["range"]["start"]
        print(f"{finding['file']}:{start['line'] + 1}: {finding.get('rule')}: "
              f"{finding['message'].splitlines()[0]}")
    for entry in gone:
        print(f"fixed, take it off {OPEN.name}: {entry}")
    total = sum(map(sum, (r.values() for r in now.values())))
    print(f"pyright: {total} findings, {len(new)} not written down, {len(gone)} fixed")
    return 1 if new or gone else 0


def _over(finding: dict, now: dict, known: dict) -> bool:
    name = Path(finding["file"]).resolve().relative_to(ROOT).as_posix()
    rule = finding.get("rule", "error")
    return now[name][rule] > known.get(name, {}).get(rule, 0)


if __name__ == "__main__":
    raise SystemExit(main())

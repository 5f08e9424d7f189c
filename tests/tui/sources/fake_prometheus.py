"""A tiny PromQL backend for discovery and diagnosis tests: it holds series (label sets with
``__name__`` and a value) and answers the few query shapes they ask, evaluated for real."""

from __future__ import annotations

import re
from collections import Counter

from ranktop.tui.sources.prometheus.client import QueryError, Sample

_COUNT = re.compile(r"^count(?: by \(([^)]*)\))? ?\((.*)\)$")
_SELECTOR = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?(?: (==) (\d+))?$')
_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)(=~|=)"((?:[^"\\]|\\.)*)"')


class FakePrometheus:
    """What ``PromClient`` offers discovery and diagnosis, over a list of series."""

    backend = ""

    def __init__(self, series: list[dict[str, str]], failing: set[str] = frozenset()) -> None:
        self.series = series
        self.failing = failing  # queries (or "names") that fail
        self.asked: list[str] = []

    def metric_names(self, since: float) -> list[str]:
        self.asked.append("names")
        if "names" in self.failing:
            raise QueryError("HTTP 503", "unavailable")
        return sorted({s["__name__"] for s in self.series})

    def label_names(self, match: str, since: float) -> list[str]:
        self.asked.append(f"labels {match}")
        found = self._select(match)
        return sorted({k for s in found for k in s if k != "value"})

    def query(self, expression: str, budget: object = None) -> list[Sample]:
        self.asked.append(expression)
        if expression in self.failing:
            raise QueryError("HTTP 422", "bad query")
        rows = self._count(expression)
        if rows is None:
            raise AssertionError(f"the fake does not know {expression!r}")
        return rows

    def _count(self, expression: str) -> list[Sample] | None:
        outer = _COUNT.match(expression)
        if outer is None:
            return None
        by = _names(outer.group(1))
        inner = outer.group(2)
        nested = _COUNT.match(inner)
        if nested is not None:
            inner_by = _names(nested.group(1))
            groups = {tuple((k, s[k]) for k in inner_by if k in s)
                      for s in self._select(nested.group(2))}
            members = [dict(g) for g in groups]
        else:
            members = self._select(inner)
        counts = Counter(tuple((k, m[k]) for k in by if k in m) for m in members)
        return [Sample(dict(key), float(n), 0.0) for key, n in counts.items()]

    def _select(self, selector: str) -> list[dict[str, str]]:
        match = _SELECTOR.match(selector)
        if match is None:
            raise AssertionError(f"the fake cannot select {selector!r}")
        name, matchers, equals, value = match.groups()
        found = [s for s in self.series if s["__name__"] == name]
        for label, op, wanted in _MATCHER.findall(matchers or ""):
            test = (lambda v, w=wanted: re.fullmatch(w, v) is not None) if op == "=~" else (
                lambda v, w=wanted: v == w)
            found = [s for s in found if test(s.get(label, ""))]
        if equals:
            found = [s for s in found if float(s.get("value", "1")) == float(value)]
        return found


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def job_series(name: str, ranks: int, job: str = "llama", **labels: str) -> list[dict]:
    """One series per rank, labelled as a job that names its metrics its own way."""
    return [{"__name__": name, "exported_job": job, "job": "pods", "rank": str(r),
             "local_rank": str(r % 2), "hostname": f"node-{r // 2}", **labels}
            for r in range(ranks)]

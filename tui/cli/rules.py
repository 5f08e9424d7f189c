"""`ranktop rules`: Prometheus recording rules for the job's metric names, printed as YAML;
with ``--jobs``, those of the jobs list."""

from __future__ import annotations

from typing import TextIO

from ..settings.config import Settings
from ..sources.prometheus.fleet import fleet_rules_yaml
from ..sources.prometheus.rules import rules_yaml


def print_rules(settings: Settings, out: TextIO, fleet: bool = False) -> int:
    try:
        text = fleet_rules_yaml(settings) if fleet else rules_yaml(settings)
    except ValueError as error:  # a label or metric name PromQL cannot hold
        print(f"ranktop rules: {error}", file=out)
        return 2
    out.write(text)
    return 0

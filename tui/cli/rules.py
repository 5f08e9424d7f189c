"""`ranktop rules`: Prometheus recording rules for the job's metric names, printed as YAML;
with ``--jobs``, those of the jobs list."""

from __future__ import annotations

from typing import TextIO

from ..settings.config import Settings
from ..sources.prometheus.fleet import fleet_rules_yaml
from ..sources.prometheus.rules import rules_yaml

EVERY_JOB = ("ranktop rules: no job named (--job NAME or RANKTOP_JOB): these rules match "
             "every job's series")


def print_rules(settings: Settings, out: TextIO, err: TextIO, fleet: bool = False) -> int:
    """The rules on ``out``; on ``err``, what is wrong, or that they match every job."""
    try:
        text = fleet_rules_yaml(settings) if fleet else rules_yaml(settings)
    except ValueError as error:  # a label or metric name PromQL cannot hold
        print(f"ranktop rules: {error}", file=err)
        return 2
    if not fleet and not settings.prometheus.job:
        print(EVERY_JOB, file=err)
    out.write(text)
    return 0

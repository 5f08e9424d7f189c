"""Prometheus for the whole job, NVML for this node: this node's ranks take NVML's fresher
values, and the frame says which ranks they are so the screen can mark them. Every other
capability of a source is the job's source's (``primary``): its Retry-After, its history,
its past for a late start, its labels, its GPU models, who else is on a node."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import replace

from ..core.advice.tenants import NodeTenants
from ..core.detect.lookback import Lookback
from ..core.history import Point
from ..core.model import Frame, Rank, RankMap, SourceStatus, is_missing
from .base import Source

# What NVML reads that Prometheus also has; SM activity is not among them (NVML has no
# SM-active counter), so this node's SM cells stay Prometheus's.
LOCAL_METRICS = ("gpu_util", "temperature", "power", "sm_clock", "throttle_reasons",
                 "memory_used", "ecc_dbe", "xid", "nvlink", "nvlink_tx", "nvlink_rx")


class MergedSource(Source):
    """The job from ``primary``; the GPUs of this node from ``local`` where it has a value."""

    def __init__(self, primary: Source, local: Source) -> None:
        self.primary = primary
        self.local = local
        self.name = f"{primary.name} + {local.name}"
        self.job_name = primary.job_name
        self.local_ranks: frozenset[int] = frozenset()

    @property
    def rank_map(self) -> RankMap:
        return self.primary.rank_map

    @property
    def log_spec(self) -> str:
        return self.primary.log_spec

    @property
    def flight_spec(self) -> str:
        return self.primary.flight_spec

    @property
    def retry_after(self) -> float | None:
        return self.primary.retry_after

    def backfill(self, rank: int, metrics: Sequence[str], seconds: float, step: float,
                 ) -> dict[str, list[Point]]:
        return self.primary.backfill(rank, metrics, seconds, step)

    def lookback(self, job_values: Sequence[str], seconds: float, step: float,
                 until: float | None = None) -> Lookback | None:
        return self.primary.lookback(job_values, seconds, step, until)

    def job_past(self, job_values: Sequence[str], seconds: float, step: float, until: float
                 ) -> dict[str, list[tuple[float, float]]] | None:
        return self.primary.job_past(job_values, seconds, step, until)

    def series_end(self) -> float | None:
        return self.primary.series_end()

    @property
    def keeps_past(self) -> bool:  # type: ignore[override]
        return self.primary.keeps_past

    def frames_at(self, times: Sequence[float]) -> Iterator[tuple[Frame, RankMap]]:
        """The job's past from ``primary``: this node's GPUs keep none of their own."""
        return self.primary.frames_at(times)

    def past_said(self) -> tuple[str, ...]:
        return self.primary.past_said()

    def held(self, rank: Rank) -> Rank:
        return self.primary.held(rank)

    def tenants(self, nodes: Sequence[str]) -> dict[str, NodeTenants]:
        return self.primary.tenants(nodes)

    def close(self) -> None:
        self.local.close()  # NVML's handle first: the job's source holds nothing as dear
        self.primary.close()

    async def poll(self) -> Frame:
        answers = await asyncio.gather(self.primary.poll(), self.local.poll(),
                                       return_exceptions=True)
        main, local = answers
        if isinstance(main, BaseException):
            raise main
        if isinstance(local, BaseException):
            return main  # the local status says what went wrong
        return self.overlay(main, local)

    def overlay(self, main: Frame, local: Frame) -> Frame:
        """``main`` with this node's ranks' values replaced by NVML's where it has one."""
        where = self._local_positions()
        values = {metric: list(series) for metric, series in main.values.items()}
        for metric in LOCAL_METRICS:
            mine = local.values.get(metric)
            if mine is None:
                continue
            target = values.setdefault(metric, [float("nan")] * len(self.rank_map))
            for position, rank in where.items():
                if position < len(mine) and not is_missing(mine[position]):
                    target[rank] = mine[position]
        self.local_ranks = frozenset(where.values())
        return replace(main, values=values, local=self.local_ranks)

    def _local_positions(self) -> dict[int, int]:
        """NVML's GPU position -> the job's rank, by GPU UUID, else by host and GPU index."""
        by_uuid = {r.uuid: r.rank for r in self.rank_map.ranks if r.uuid}
        by_place = {(r.host, r.gpu): r.rank for r in self.rank_map.ranks}
        found = {}
        for position, gpu in enumerate(self.local.rank_map.ranks):
            rank = by_uuid.get(gpu.uuid) if gpu.uuid else None
            if rank is None:
                rank = by_place.get((gpu.host, gpu.gpu))
            if rank is not None:
                found[position] = rank
        return found

    def gpu_model(self, rank: int) -> str:
        return self.primary.gpu_model(rank)

    def queries(self) -> dict[str, str]:
        return self.primary.queries()

    def status(self) -> SourceStatus:
        status = self.primary.status()
        local = self.local.status()
        note = (f"NVML: {len(self.local_ranks)} ranks of this node"
                if self.local_ranks else f"NVML: {local.message or 'no rank of this node'}")
        detail = "; ".join(part for part in (status.detail, note) if part)
        return replace(status, name=self.name, detail=detail)

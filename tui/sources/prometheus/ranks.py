"""The Prometheus source's rank map, learned from the answers of a poll's first queries.

The job's own per-rank metrics name the ranks (or a rank-map file, the Slurm node list, or
the order of DCGM's hosts and GPUs); DCGM series join to them by GPU UUID, else by host and
GPU. The rank map, and the join made from it, are kept until the labels they were learned
from change, so a poll costs one lookup per series whatever the number of ranks. DCGM's
labels also name each rank's GPU model, and the host and pod as their labels hold them.

A rank past the map's end (a GPU new to a guessed map) joins it only once two answers in a
row name it (``GrowthCheck``): the map only grows, so one hostile answer of 100,000 series
would otherwise leave a thousand ranks "missing" for the life of the console.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import replace
from functools import partial

from ...core import rank_merge, ranks
from ...core.domain import (
    DCGM_GPU_LABEL,
    DCGM_HOST_LABELS,
    DCGM_MODEL_LABELS,
    GPU_PROBE_METRIC,
)
from ...core.model import Rank, RankMap
from ...settings.sources import RankSettings
from .client import QueryError
from .join import Answers

STEP_METRIC = "step_time"  # the job's metric whose labels name the ranks
PROBE_METRIC = GPU_PROBE_METRIC  # the DCGM metric whose labels name hosts, pods and models
_MODEL, _OLD_MODEL = DCGM_MODEL_LABELS
RANK_KEYS = (f"metric:{STEP_METRIC}", f"metric:{PROBE_METRIC}")  # the rank map's answers
UNKNOWN = RankMap(ranks=(), hosts=(), gpus_per_node=1, source="not known yet")


class RankLearner:
    """The rank map, the join made from it, each rank's GPU model, and each host's and
    pod's name as its label holds it: learned from the answers to ``RANK_KEYS``."""

    def __init__(self) -> None:
        self.rank_map = UNKNOWN
        self.may_guess = True  # whether ranks may be guessed from DCGM's GPUs (any job's)
        self.models: dict[int, str] = {}  # rank -> DCGM's modelName
        self._models_read = False  # whether DCGM's labels were read for them yet
        self.originals: dict[str, str] = {}  # host or pod shown -> as its label holds it

    def use(self, rank_settings: RankSettings) -> None:
        """Learn as ``rank_settings`` say (again when a find is used): the map is learned
        again from the next answers."""
        self.rank_settings = rank_settings
        self._seen: tuple[frozenset, frozenset] | None = None  # labels the map came from
        self._new_ranks = GrowthCheck()  # named by the job's series
        self._new_gpus = GrowthCheck()  # named by DCGM's, for a guessed map
        self._join_ranks(self.rank_map)

    def learn(self, answers: Answers) -> bool:
        """The rank map (and GPU models) from the answers in so far; says whether the join
        was made anew (the queries then ask for its labels)."""
        join = self.join
        if self._learn_ranks(answers) or not self._models_read:
            self._learn_models(answers)
        return self.join is not join

    def gpu_model(self, rank: int) -> str:
        """The rank's GPU model, where DCGM's labels named it."""
        return self.models.get(rank, "")

    def held(self, rank: Rank) -> Rank:
        """``rank`` with its host and pod as their labels hold them, for a query about it:
        the map holds them plain, as the screen shows them."""
        return replace(rank, host=self.originals.get(rank.host, rank.host),
                       pod=self.originals.get(rank.pod, rank.pod))

    def learned_from(self, metric_id: str) -> tuple[str, ...]:
        """The labels the rank map (and each GPU's model) is read from, on the metrics
        they are read from."""
        rs = self.rank_settings
        if metric_id == STEP_METRIC:
            return (rs.rank_label, rs.host_label, rs.local_gpu_label, rs.uuid_label,
                    rs.pod_label)
        if metric_id == PROBE_METRIC:
            return (DCGM_GPU_LABEL, *DCGM_HOST_LABELS, *DCGM_MODEL_LABELS)
        return ()

    def _join_ranks(self, rank_map: RankMap) -> None:
        """Read series through ``rank_map`` from now on."""
        self.join = ranks.DcgmJoin(rank_map, self.rank_settings.rank_label)

    def _learn_ranks(self, answers: Answers) -> bool:
        """Resolve the rank map, again whenever the labels it is learned from change (a
        better source for it appears, ranks come or go), and say whether they did; else
        keep it as it is."""
        step = [labels for labels, _ in _pairs(answers, STEP_METRIC)]
        rs = self.rank_settings
        guessed = ranks.is_guessed(self.rank_map)
        # Each rank's node comes from DCGM's series only where the job's series name a pod
        # and no host; the guessed map comes from DCGM's series alone.
        by_pod = any(rs.host_label not in labels and labels.get(rs.pod_label)
                     for labels in step) if rs.pod_label else False
        dcgm = [labels for labels, _ in _pairs(answers, PROBE_METRIC)] if (
            by_pod or guessed) else []
        seen = (_label_sets(step), _label_sets(dcgm))
        growing = self._new_ranks.pending or self._new_gpus.pending
        if seen == self._seen and self.rank_map.ranks and not growing:
            return False
        self._seen = seen
        if self.rank_map.ranks:  # the first map is learned whole: nothing to hold it against
            known = len(self.rank_map)
            step = self._new_ranks.confirmed(step, partial(
                _new_rank, rs.rank_label, known, ranks.rank_ceiling(known)))
            if guessed:
                places = {(rank.host, rank.gpu) for rank in self.rank_map.ranks}
                dcgm = self._new_gpus.confirmed(dcgm, partial(_new_gpu, places))
        for metric_id in (STEP_METRIC, PROBE_METRIC):
            answer = answers.get(f"metric:{metric_id}")
            self.originals.update(getattr(answer, "originals", {}))
        pods = ranks.nodes_of_pods(dcgm) if by_pod else {}
        learned = ranks.from_job_series(step, rs.rank_label, rs.host_label,
                                        rs.local_gpu_label, rs.uuid_label, rs.pod_label, pods,
                                        known=len(self.rank_map))
        if learned is None and (guessed or not self.rank_map.ranks):
            learned = self._fallback_ranks(
                dcgm or [labels for labels, _ in _pairs(answers, PROBE_METRIC)])
        if learned is not None:
            merged, _ = rank_merge.merge(self.rank_map, learned)
            if merged is not self.rank_map:
                self.rank_map = merged
                self._join_ranks(merged)
        return True

    def _fallback_ranks(self, dcgm: list[ranks.Labels]) -> RankMap | None:
        rs = self.rank_settings
        try:
            if rs.rank_map_file is not None:
                return ranks.from_file(rs.rank_map_file)
            if rs.slurm_nodelist:
                return ranks.from_slurm(rs.slurm_nodelist, rs.gpus_per_node)
        except ranks.RankMapError as error:
            raise QueryError("rank map", str(error)) from None
        return ranks.from_dcgm(dcgm) if self.may_guess else None

    def _learn_models(self, answers: Answers) -> None:
        """Each rank's GPU model, as DCGM's labels name it (read again when they change)."""
        for labels, _ in _pairs(answers, PROBE_METRIC):
            self._models_read = True
            model = labels.get(_MODEL) or labels.get(_OLD_MODEL)
            if model:
                rank = self.join.rank_of(labels)
                if rank is not None:
                    self.models[rank] = model


class GrowthCheck:
    """Which series may add to the map: those whose addition the answer before named too."""

    def __init__(self) -> None:
        self._named: frozenset[Hashable] = frozenset()  # additions the last answer named

    @property
    def pending(self) -> bool:
        """Whether the last answer named additions."""
        return bool(self._named)

    def confirmed(self, series: list[ranks.Labels],
                  addition: Callable[[ranks.Labels], Hashable | None]) -> list[ranks.Labels]:
        """``series`` without those whose ``addition`` (None: none) the last answer did not
        name; remembers this answer's."""
        named = set()
        kept = []
        for labels in series:
            added = addition(labels)
            if added is not None:
                named.add(added)
                if added not in self._named:
                    continue
            kept.append(labels)
        self._named = frozenset(named)
        return kept


def _new_rank(rank_label: str, known: int, ceiling: int, labels: ranks.Labels) -> int | None:
    """The rank a job series names past the map's ``known`` ranks (below the ``ceiling``
    past which ranks are left out anyway), else None."""
    rank = ranks.rank_number(labels.get(rank_label, ""))
    return rank if rank is not None and known <= rank < ceiling else None


def _new_gpu(places: set[tuple[str, int]], labels: ranks.Labels) -> tuple[str, int] | None:
    """The host and GPU a DCGM series names that are not among a guessed map's ``places``,
    else None."""
    place = ranks.dcgm_place(labels)
    return place if place is not None and place not in places else None


def _pairs(answers: Answers, metric_id: str) -> Iterable[tuple[ranks.Labels, float]]:
    """The labels and value of each series of a metric's answer (none if it failed)."""
    answer = answers.get(f"metric:{metric_id}")
    return answer.pairs() if answer is not None else ()


def _label_sets(series: list[ranks.Labels]) -> frozenset[tuple[tuple[str, str], ...]]:
    """The series' label sets, whatever the order of the series (the labels of each come
    in the order the server keeps them: the same every poll)."""
    return frozenset(tuple(labels.items()) for labels in series)

"""The job's parallelism: which pipeline stage, data-parallel replica and tensor-parallel
index each rank is, from ``[layout] parallelism`` ("tp=8,pp=4,dp=16") and its rank order.

The order names the axes fastest first, as Megatron-Core does (its default
``tp-cp-ep-dp-pp``: tensor-parallel ranks are neighbours, pipeline stages lie furthest
apart). TorchTitan lists its mesh slowest first (pp, dp, cp, tp): the same job here is
``tp-cp-dp-pp``. Every axis multiplies: their product is the number of ranks.

The maps lay a job out with pipeline stages as rows and data-parallel replicas as columns:
one column per replica, its stages stacked top to bottom, each stage's tensor- (context-,
expert-) parallel ranks together inside it. ``Parallelism.display_order`` is that
arrangement, as the rank at each position.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

AXES = ("tp", "cp", "ep", "dp", "pp")
AXIS_NAMES = {"tp": "tensor", "cp": "context", "ep": "expert", "dp": "data", "pp": "pipeline"}
DEFAULT_ORDER = "tp-cp-ep-dp-pp"
INNER = ("tp", "cp", "ep")  # the axes grouped inside one (stage, replica) cell group
MAX_AXIS = 1 << 20
SHOWN = ("tp", "cp", "ep", "pp", "dp")  # the order people write them in


@dataclass(frozen=True)
class Parallelism:
    """Sizes of every axis (1 where not named) and the order, fastest first."""

    sizes: tuple[tuple[str, int], ...]  # (axis, size) in AXES order
    order: tuple[str, ...]
    dp_inferred: bool = False  # dp was not given: it is what the world size leaves

    def size(self, axis: str) -> int:
        return dict(self.sizes)[axis]

    @property
    def world(self) -> int:
        return prod(size for _, size in self.sizes)

    @property
    def stages(self) -> int:
        return self.size("pp")

    @property
    def replicas(self) -> int:
        return self.size("dp")

    @property
    def group(self) -> int:
        """Ranks in one stage of one replica: the tensor-, context- and expert-parallel ones."""
        return prod(self.size(axis) for axis in INNER)

    def coords(self, rank: int) -> dict[str, int]:
        """Each axis's index of ``rank``: {"tp": 3, "pp": 1, "dp": 5, ...}."""
        found = {}
        for axis in self.order:
            rank, found[axis] = divmod(rank, self.size(axis))
        return found

    def rank_of(self, coords: dict[str, int]) -> int:
        rank, stride = 0, 1
        for axis in self.order:
            rank += coords.get(axis, 0) * stride
            stride *= self.size(axis)
        return rank

    def stage(self, rank: int) -> int:
        return self.coords(rank)["pp"]

    def replica(self, rank: int) -> int:
        return self.coords(rank)["dp"]

    def display_order(self) -> list[int]:
        """The rank at each position of the maps: replica by replica (columns), stage by
        stage within one (rows), the inner axes in rank order within a stage."""
        inner = [axis for axis in self.order if axis in INNER]
        cells = []
        for replica in range(self.replicas):
            for stage in range(self.stages):
                for index in range(self.group):
                    coords = {"dp": replica, "pp": stage}
                    for axis in inner:
                        index, coords[axis] = divmod(index, self.size(axis))
                    cells.append(self.rank_of(coords))
        return cells

    @property
    def named(self) -> str:
        """"tp=8,pp=4,dp=16": the axes of more than one rank, and pp and dp."""
        sizes = dict(self.sizes)
        unknown_dp = self.dp_inferred and sizes["dp"] == 1  # not yet inferred
        return ",".join(f"{axis}={sizes[axis]}" for axis in SHOWN
                        if sizes[axis] > 1 or (axis == "pp" or (axis == "dp" and not unknown_dp)))

    def describe(self) -> str:
        """"tp=8,pp=4,dp=16 (512 ranks, order tp-cp-ep-dp-pp)"."""
        inferred = ", dp from the world size" if self.dp_inferred else ""
        return f"{self.named} ({self.world} ranks, order {'-'.join(self.order)}{inferred})"


def parse(text: str, order: str = DEFAULT_ORDER) -> Parallelism | None:
    """``"tp=8,pp=4,dp=16"`` and an order; None for an empty text. Raises ValueError with a
    one-line reason. Without dp, dp is left for ``fit_world`` to infer."""
    if not text.strip():
        return None
    sizes: dict[str, int] = {}
    for part in text.replace(" ", "").split(","):
        axis, equals, number = part.partition("=")
        axis = axis.lower()
        if not equals or axis not in AXES:
            raise ValueError(f"{part!r} is not axis=size (axes: {', '.join(AXES)}; "
                             'e.g. "tp=8,pp=4,dp=16")')
        if axis in sizes:
            raise ValueError(f"{axis} is given twice")
        if not number.isdecimal() or not 1 <= int(number) <= MAX_AXIS:
            raise ValueError(f"{axis}={number}: the size must be a whole number from 1 to "
                             f"{MAX_AXIS}")
        sizes[axis] = int(number)
    axes = parse_order(order)
    inferred = "dp" not in sizes
    return Parallelism(tuple((axis, sizes.get(axis, 1)) for axis in AXES), axes, inferred)


def parse_order(order: str) -> tuple[str, ...]:
    """``"tp-cp-ep-dp-pp"``: every axis once, fastest first. Raises ValueError."""
    axes = tuple(axis.strip().lower() for axis in order.split("-"))
    unknown = [axis for axis in axes if axis not in AXES]
    if unknown or len(set(axes)) != len(axes) or len(axes) != len(AXES):
        raise ValueError(f"order {order!r} must name each of {', '.join(AXES)} once, "
                         f"fastest first (Megatron's default: {DEFAULT_ORDER})")
    return axes


def fit_world(parallelism: Parallelism, world: int) -> Parallelism:
    """The parallelism for a job of ``world`` ranks: dp inferred where it was not given.
    Raises ValueError saying why it cannot be this job's."""
    if parallelism.dp_inferred:
        others = parallelism.world  # dp counts as 1 until inferred
        if world % others:
            given = ",".join(f"{a}={s}" for a, s in parallelism.sizes if a != "dp" and s > 1)
            raise ValueError(f"{given or 'pp=1'} ({others} ranks per replica) does not divide "
                             f"the job's {world} ranks: give dp, or check the sizes")
        sizes = tuple((a, world // others if a == "dp" else s) for a, s in parallelism.sizes)
        return Parallelism(sizes, parallelism.order, dp_inferred=True)
    if parallelism.world != world:
        raise ValueError(f"{parallelism.named} is {parallelism.world} ranks but the job has "
                         f"{world}")
    return parallelism


def for_job(parallelism: Parallelism | None, world: int) -> tuple[Parallelism | None, str]:
    """The parallelism of a job of ``world`` ranks, else None and why, in one line for the
    console, ``ranktop report`` and ``check-config`` alike ("" when none was given)."""
    if parallelism is None:
        return None, ""
    try:
        return fit_world(parallelism, world), ""
    except ValueError as error:
        return None, f"[layout] parallelism {error}: laid out by node"

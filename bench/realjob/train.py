"""A tiny real training job for the rig: run by real ``torchrun`` agents, one process a rank.

It trains a small linear model on synthetic data with real ``gloo`` collectives (one
``all_reduce`` of the gradients a step), exports ranktop's per-rank metrics through
``prometheus_client``, logs its steps, checkpoints and resumes like a training job does,
records its collectives in PyTorch's Flight Recorder (``TORCH_FR_BUFFER_SIZE``) and, since
gloo records but never dumps on a timeout, writes the dump itself when a collective fails,
to the file PyTorch would use (``TORCH_FR_DUMP_TEMP_FILE`` + rank).

The rig's fault injector steers it through files in ``RIG_DIR/control``:

- ``slow-<rank>``: seconds of extra compute a step on that rank (a straggler);
- ``spike``: the labels' noise (standard deviation, 0.3 when healthy) while the file
  exists: the loss jumps to a plateau about ten times its healthy level (a loss spike).

Needs ``torch`` and ``prometheus_client`` (``pip install -e '.[realjob]'``).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from prometheus_client import Gauge, start_http_server
from torch.distributed.elastic.multiprocessing.errors import record

FEATURES = 256
BATCH = 512
BASE_LR = 0.05
LABEL_NOISE = 0.3
CHECKPOINT_EVERY = 50
STEP_SECONDS = 0.5  # each step is padded to about this long: a steady, readable pace

LABELS = ["training_job", "rank", "local_rank", "hostname"]
STEP_SECONDS_GAUGE = Gauge("training_step_seconds", "Last step's duration", LABELS)
COMPUTE_GAUGE = Gauge("training_compute_seconds", "Last step's time outside collectives", LABELS)
STEP_GAUGE = Gauge("training_step", "Current step", LABELS)
TOKENS_GAUGE = Gauge("training_tokens_per_second", "This rank's samples per second", LABELS)
LOSS_GAUGE = Gauge("training_loss", "Training loss", LABELS)
CHECKPOINT_GAUGE = Gauge("training_checkpoint_step", "Step of the last saved checkpoint", LABELS)

log = logging.getLogger("train")


def _control(rig: Path, name: str) -> float | None:
    """The number in a control file, or None when the file is absent or unreadable."""
    try:
        return float((rig / "control" / name).read_text().strip() or "0")
    except (OSError, ValueError):
        return None


def _dump_flight_recorder(rank: int) -> None:
    """Write this rank's Flight Recorder buffer where PyTorch writes its own dumps."""
    prefix = os.environ.get("TORCH_FR_DUMP_TEMP_FILE")
    if not prefix:
        return
    data = torch._C._distributed_c10d._dump_fr_trace()
    path = Path(f"{prefix}{rank}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else bytes(data))
    log.error("wrote Flight Recorder dump to %s", path)


def _load_checkpoint(path: Path, weights: torch.Tensor) -> int:
    if not path.exists():
        return 0
    state = torch.load(path)
    weights.copy_(state["weights"])
    log.info("resumed from checkpoint %s at step %d", path, state["step"])
    return int(state["step"])


def _save_checkpoint(path: Path, weights: torch.Tensor, step: int) -> None:
    partial = path.with_suffix(".partial")
    torch.save({"weights": weights, "step": step}, partial)
    partial.replace(path)
    log.info("saved checkpoint to %s at step %d", path, step)


def _train(rank: int, world: int, me: dict[str, str], rig: Path) -> None:
    generator = torch.Generator().manual_seed(1234)
    truth = torch.randn(FEATURES, 1, generator=generator)
    weights = torch.zeros(FEATURES, 1)
    checkpoint = rig / "checkpoint.pt"
    step = _load_checkpoint(checkpoint, weights)
    data = torch.Generator().manual_seed(rank * 7919 + step)
    while True:
        started = time.perf_counter()
        inputs = torch.randn(BATCH, FEATURES, generator=data)
        noise = _control(rig, "spike") or LABEL_NOISE
        targets = inputs @ truth + noise * torch.randn(BATCH, 1, generator=data)
        error = inputs @ weights - targets
        loss = float((error**2).mean())
        gradient = 2 * inputs.T @ error / BATCH
        time.sleep(_control(rig, f"slow-{rank}") or 0.0)
        compute = time.perf_counter() - started
        dist.all_reduce(gradient)
        weights -= BASE_LR * gradient / world
        step += 1
        time.sleep(max(0.0, STEP_SECONDS - (time.perf_counter() - started)))
        took = time.perf_counter() - started
        STEP_SECONDS_GAUGE.labels(**me).set(took)
        COMPUTE_GAUGE.labels(**me).set(compute)
        STEP_GAUGE.labels(**me).set(step)
        TOKENS_GAUGE.labels(**me).set(BATCH / took)
        LOSS_GAUGE.labels(**me).set(loss)
        log.info("step %d loss %.4f step_time %.3fs", step, loss, took)
        if step % CHECKPOINT_EVERY == 0:
            if rank == 0:
                _save_checkpoint(checkpoint, weights, step)
            dist.barrier()
            CHECKPOINT_GAUGE.labels(**me).set(step)


@record
def main() -> None:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    rig = Path(os.environ["RIG_DIR"])
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format=f"%(asctime)s %(levelname)s [rank{rank}] %(message)s")
    (rig / "pids").mkdir(parents=True, exist_ok=True)
    (rig / "pids" / f"rank{rank}").write_text(str(os.getpid()))
    me = {"training_job": os.environ["RIG_JOB"], "rank": str(rank),
          "local_rank": str(local_rank), "hostname": os.environ["RIG_HOST"]}
    start_http_server(int(os.environ["RIG_PORT_BASE"]) + rank, addr="127.0.0.1")
    timeout = timedelta(seconds=float(os.environ.get("RIG_TIMEOUT", "30")))
    dist.init_process_group("gloo", timeout=timeout)
    log.info("rank %d of %d on %s (local rank %d, pid %d)", rank, world, me["hostname"],
             local_rank, os.getpid())
    try:
        _train(rank, world, me, rig)
    except Exception:
        log.exception("training failed")
        _dump_flight_recorder(rank)
        raise


if __name__ == "__main__":
    main()

"""A real sharded backend on loopback: two shard Prometheus processes, each keeping half of a
simulated job's series, and a front Prometheus that scrapes nothing and reads both through
``remote_read`` (``read_recent: true``), as a cluster that outgrew one Prometheus reads its
shards. A shard can be stopped and started again (same port, same data folder).

How the series are split: both shards scrape the same ``ranktop simulate`` and each keeps the
series of half the nodes (``metric_relabel_configs``, hashmod of the node's name). The
simulator serves every node from one endpoint, so the split is by label, not by target.
DCGM's series name the node ``Hostname`` and the job's own ``hostname``: the two are joined
into one value before hashing, so that a node's GPUs and its ranks land on the same shard,
as where each node's exporters are scraped by the shard of its rack. The ``up`` and
``scrape_*`` series are not relabelled: both shards hold them, the front merges the two.

What the front answered, seen by hand with curl (Prometheus 2.42, 64 simulated nodes: 288
ranks on shard 0, 224 on shard 1):

- both shards up: 200, ``{"status":"success","data":{"resultType":"vector","result":
  [{"metric":{},"value":[<time>,"512"]}]}}`` for ``count(training_step_seconds)``, no
  ``warnings`` key;
- shard 1 stopped: still 200 and ``"status":"success"``, the other shard's series only
  (``"288"``), and after ``data`` one string per failed shard, whatever the query (instant
  or range)::

      "warnings":["remote_read: error sending request: Post \"http://127.0.0.1:<port>/api/v1/read\":
                  dial tcp 127.0.0.1:<port>: connect: connection refused"]

  (one line in the answer). The remote_read ``name`` is not in it; no header and no other
  key tells the answer apart from a whole one (same Content-Type, no partial-response
  header);
- shard 1 started again: the whole answer (``"512"``) at once, no ``warnings`` key: the
  shard replays its write-ahead log before it says it is ready, and ``read_recent`` reads
  its head block. Its newest samples are those from before the stop until it scrapes again.
- both shards stopped: 200, ``"result":[]`` and two warnings, one per shard.

Beside the queries, with both shards up: ``/api/v1/labels`` and
``/api/v1/label/__name__/values`` answer 200 with ``"data":[]`` and ``"warnings":["not
implemented","not implemented"]`` (remote_read gives no names: a front's name look-ups find
nothing, and warn, whole or not); ``/api/v1/series`` answers from the shards;
``/api/v1/targets`` has no targets (the front scrapes none).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.cluster import Prometheus, free_port, instant, require

SHARDS = 2
# The label that holds the node's name for hashing; dropped once the shard is chosen.
NODE_LABEL = "__tmp_node"
SHARD_LABEL = "__tmp_shard"


def shard_config(targets: list[int], interval: str, shard: int, shards: int = SHARDS) -> str:
    """A Prometheus config scraping ``targets`` and keeping the series of the nodes whose
    name hashes to ``shard`` (of ``shards``)."""
    return "\n".join([
        f"global: {{scrape_interval: {interval}}}",
        "scrape_configs:",
        "  - job_name: ranktop-simulate",
        f"    static_configs: [{{targets: {[f'127.0.0.1:{p}' for p in targets]}}}]",
        "    metric_relabel_configs:",
        # DCGM says Hostname, the job hostname: one is empty, joined they are the node
        f"      - {{source_labels: [Hostname, hostname], separator: '', "
        f"target_label: {NODE_LABEL}}}",
        f"      - {{source_labels: [{NODE_LABEL}], modulus: {shards}, "
        f"target_label: {SHARD_LABEL}, action: hashmod}}",
        f"      - {{source_labels: [{SHARD_LABEL}], regex: '{shard}', action: keep}}",
        f"      - {{regex: '{NODE_LABEL}|{SHARD_LABEL}', action: labeldrop}}",
    ]) + "\n"


def front_config(shard_ports: list[int]) -> str:
    """A Prometheus config that scrapes nothing and reads each shard, its newest samples too."""
    lines = ["global: {scrape_interval: 1s}", "remote_read:"]
    for index, port in enumerate(shard_ports):
        lines.append(f"  - {{name: shard-{index}, url: 'http://127.0.0.1:{port}/api/v1/read', "
                     "read_recent: true}")
    return "\n".join(lines) + "\n"


class ConfiguredPrometheus(Prometheus):
    """A Prometheus (``cluster.Prometheus``'s start, stop and waits) run with ``config``."""

    def __init__(self, folder: Path, config: str, port: int | None = None) -> None:
        self.binary = require("prometheus")
        self.folder = folder
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        (folder / "prometheus.yml").write_text(config)
        self.process = None
        self.start()


class ShardedBackend:
    """Two shards scraping ``targets`` (the simulators' ports), each keeping half the nodes,
    and a front reading both: ``url`` is the front's, the one ranktop is pointed at."""

    def __init__(self, folder: Path, targets: list[int], interval: str = "1s") -> None:
        self.shards: list[ConfiguredPrometheus] = []
        try:
            for index in range(SHARDS):
                place = folder / f"shard-{index}"
                place.mkdir()
                self.shards.append(ConfiguredPrometheus(
                    place, shard_config(targets, interval, index)))
            place = folder / "front"
            place.mkdir()
            self.front = ConfiguredPrometheus(place, front_config([s.port for s in self.shards]))
        except BaseException:
            for shard in self.shards:
                shard.stop()
            raise
        self.url = self.front.url

    def stop_shard(self, index: int) -> None:
        """Shard ``index`` stopped: its series are not answered until it starts again."""
        self.shards[index].stop()

    def start_shard(self, index: int) -> None:
        """Shard ``index`` started again on its port, from its data folder (ready once it has
        replayed its write-ahead log)."""
        self.shards[index].start()

    def hosts_on(self, index: int, job: str) -> set[str]:
        """The nodes whose series of ``job`` shard ``index`` keeps (asked of the shard)."""
        result = instant(self.shards[index].url,
                         f'count by (hostname) (training_step_seconds{{training_job="{job}"}})')
        return {series["metric"]["hostname"] for series in result}

    def ranks_on(self, index: int, job: str) -> set[int]:
        """The ranks of ``job`` that shard ``index`` keeps (asked of the shard)."""
        result = instant(self.shards[index].url,
                         f'training_step_seconds{{training_job="{job}"}}')
        return {int(series["metric"]["rank"]) for series in result}

    def wait_for_ranks(self, job: str, ranks: int, timeout: float = 30.0) -> None:
        """Until the front answers ``ranks`` ranks of ``job``, DCGM's GPUs as many."""
        for metric in (f'training_step_seconds{{training_job="{job}"}}',
                       "DCGM_FI_DEV_GPU_TEMP"):
            self.front.wait_for_series(f"count({metric})", ranks, timeout)

    def stop(self) -> None:
        self.front.stop()
        for shard in self.shards:
            shard.stop()


@contextmanager
def sharded(folder: Path, targets: list[int], job: str, ranks: int,
            interval: str = "1s") -> Iterator[ShardedBackend]:
    """The sharded backend over ``targets``, once its front answers every rank of ``job``;
    every Prometheus stopped at the end (the simulators are the caller's)."""
    backend = ShardedBackend(folder, targets, interval)
    try:
        backend.wait_for_ranks(job, ranks)
        yield backend
    finally:
        backend.stop()

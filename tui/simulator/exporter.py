"""`ranktop simulate`: the simulated cluster served as dcgm-exporter and job metrics over HTTP.

One scrape of ``/metrics`` returns, in the Prometheus text format 0.0.4, what a Prometheus
scraping every node's dcgm-exporter and every rank's training metrics would hold: the
dcgm-exporter series (real names, types, help texts and labels) and the job's per-rank
metrics: ranktop's ``training_*`` convention, or (``--job-metrics foreign``) names and labels
of the job's own choosing, as a real cluster has them. A dead rank has no series at all;
absent means "no data".
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import math
import re
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..core.model import Rank
from .cluster import GPU_MODEL, SimCluster
from .families import (
    JOB_METRIC_NAMES,
    PROFILES,
    STOCK_LABELS,
    XID_FAMILY,
    XID_MESSAGES,
    XID_UNKNOWN,
    Family,
    dcgm_families,
    job_families,
    nccl_families,
)
from .flight_writer import FLIGHT_FOLDER, FlightWriter
from .log_writer import LogWriter, keep_writing
from .scenario import ScenarioError, load_scenario
from .tenants import PlacedTenant, place

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MODEL_NAME = GPU_MODEL
HGX_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)  # an 8-GPU HGX board's PCI buses
K8S_NAMESPACE = "training"
K8S_CONTAINER = "trainer"
# The GPU Operator's dcgm-exporter DaemonSet, one pod per node, scraped by a ServiceMonitor.
EXPORTER_NAMESPACE = "gpu-operator"
EXPORTER_NAME = "nvidia-dcgm-exporter"
EXPORTER_PORT_NAME = "gpu-metrics"
NCCL_COMM_ID = "0x5e1f0c0ffee0b5e1"  # the job's one communicator, as the Inspector names it
_POD_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # what Kubernetes draws pod suffixes from


@dataclass(frozen=True)
class ExportOptions:
    """What to export, and how, like dcgm-exporter's own switches.

    ``profile`` picks the counters (families.py). ``kubernetes`` adds the exporter's own
    pod, namespace and container labels (dcgm-exporter's --kubernetes, as a Prometheus with
    honor_labels keeps them); the k8s profile instead shows them as a Prometheus behind a
    ServiceMonitor stores them: renamed exported_pod, exported_namespace, exported_container,
    beside the exporter pod's own target labels (pod, namespace, container, service,
    endpoint); the job's series carry their pod's labels, as a PodMonitor scrapes them.
    ``job_metrics`` "foreign" names the job's metrics its own way and labels them ``job``,
    ``rank``, ``local_rank`` and ``hostname`` (on Kubernetes only the pod's labels: no host).
    ``dcgm`` False serves no DCGM series at all, and the job's series name no GPU: a CPU
    job (gloo, no GPUs).
    """

    job: str | None = None  # the training_job label; None: the scenario's name
    hostname_label: str = "Hostname"  # released dcgm-exporter; "hostname" on master
    sm_active: bool = True
    nvlink_bytes: bool = True
    kubernetes: bool = False
    profile: str = "default"
    job_metrics: str = "ranktop"
    nccl_inspector: bool = False  # NCCL Inspector's per-rank collective timings too
    dcgm: bool = True


def worker_pod(job: str, node: int) -> str:
    """The pod of the job's workers on a node, named as a DNS-1123 label."""
    pod = re.sub(r"[^a-z0-9-]+", "-", job.lower()).strip("-") or "job"
    return f"{pod}-worker-{node}"


def escape(value: str) -> str:
    """A label value escaped for the text format."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def pci_bus_id(gpu: int, gpus_per_node: int) -> str:
    """A deterministic PCI bus id for a GPU index, in dcgm-exporter's format."""
    on_board = gpus_per_node <= len(HGX_BUSES) and gpu < len(HGX_BUSES)
    bus = HGX_BUSES[gpu] if on_board else gpu * 256 // max(gpus_per_node, gpu + 1)
    return f"00000000:{bus:02X}:00.0"


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    return ",".join(f'{name}="{escape(value)}"' for name, value in pairs)


class MetricsRenderer:
    """Renders a cluster's scrape at any time t; label sets are built once."""

    def __init__(self, cluster: SimCluster, options: ExportOptions | None = None) -> None:
        self.cluster = cluster
        self.options = options or ExportOptions()
        self.job = self.options.job or cluster.job_name
        stock = self.options.profile != "default"
        ranks = cluster.rank_map.ranks
        self._dcgm = [self._dcgm_labels(r) + (list(STOCK_LABELS) if stock else [])
                      for r in ranks]
        self._attrs = [self._k8s_attrs(r) for r in ranks]
        self._gpu = [_labels(d + sorted(a)) for d, a in zip(self._dcgm, self._attrs, strict=True)]
        self._train = [_labels(self._job_labels(r)) for r in ranks]
        self._families = dcgm_families(self.options.profile, self.options.sm_active,
                                       self.options.nvlink_bytes) if self.options.dcgm else []
        self._training, self._job_wide = job_families(self.options.job_metrics)
        self._nccl = nccl_families(len(ranks)) if self.options.nccl_inspector else ()
        self._tenants = [_labels(self._dcgm_labels(gpu) + (list(STOCK_LABELS) if stock else [])
                                 + sorted(self._tenant_attrs(tenant, gpu)))
                         for tenant in place(cluster.scenario.tenants, cluster.rank_map,
                                             cluster.seed)
                         for gpu in _tenant_gpus(tenant)]

    def _job_labels(self, rank: Rank) -> list[tuple[str, str]]:
        number = [("rank", str(rank.rank)), ("local_rank", str(rank.gpu))]
        if self.options.job_metrics == "ranktop":
            uuid = [("gpu_uuid", rank.uuid)] if self.options.dcgm else []
            return [("training_job", self.job), *number, ("hostname", rank.host), *uuid,
                    *self._pod_monitor(rank)]
        pod = self._pod_monitor(rank)
        return [("job", self.job), *number, *(pod or [("hostname", rank.host)])]

    def _dcgm_labels(self, rank: Rank) -> list[tuple[str, str]]:
        return [
            ("gpu", str(rank.gpu)), ("UUID", rank.uuid),
            ("pci_bus_id", pci_bus_id(rank.gpu, self.cluster.rank_map.gpus_per_node)),
            ("device", f"nvidia{rank.gpu}"), ("modelName", MODEL_NAME),
            (self.options.hostname_label, rank.host),
        ]

    def _worker_pod(self, rank: Rank) -> str:
        return worker_pod(self.job, rank.node)

    def _k8s_attrs(self, rank: Rank) -> list[tuple[str, str]]:
        return self._pod_attrs(rank.host, self._worker_pod(rank), K8S_NAMESPACE)

    def _tenant_attrs(self, tenant: PlacedTenant, gpu: Rank) -> list[tuple[str, str]]:
        """Another job's GPU: its pod on Kubernetes, else its HPC job (dcgm-exporter's
        --hpc-job-mapping-dir)."""
        return (self._pod_attrs(gpu.host, tenant.name, tenant.namespace)
                or [("hpc_job", tenant.name)])

    def _pod_attrs(self, host: str, pod: str, namespace: str) -> list[tuple[str, str]]:
        worker = [("pod", pod), ("namespace", namespace), ("container", K8S_CONTAINER)]
        if self.options.kubernetes:
            return worker
        if self.options.profile != "k8s":
            return []
        digest = hashlib.blake2b(host.encode(), digest_size=8).digest()
        suffix = "".join(_POD_SUFFIX_CHARS[b % len(_POD_SUFFIX_CHARS)] for b in digest[:5])
        return [(f"exported_{name}", value) for name, value in worker] + [
            ("pod", f"{EXPORTER_NAME}-{suffix}"), ("namespace", EXPORTER_NAMESPACE),
            ("container", EXPORTER_NAME), ("service", EXPORTER_NAME),
            ("endpoint", EXPORTER_PORT_NAME)]

    def _pod_monitor(self, rank: Rank) -> list[tuple[str, str]]:
        if self.options.profile != "k8s" or self.options.kubernetes:
            return []
        return [("namespace", K8S_NAMESPACE), ("pod", self._worker_pod(rank)),
                ("container", K8S_CONTAINER)]

    def render(self, t: float) -> str:
        """The whole scrape at t seconds since the simulation started."""
        frame = self.cluster.frame_at(t)
        out: list[str] = []
        for family in self._families:
            _series(out, family, frame.values[family.key], self._gpu)
            self._tenant_series(out, family, frame.values[family.key])
        if self.options.dcgm:
            self._xid(out, frame.values["xid"])
        for family in self._training:
            _series(out, family, frame.values[family.key], self._train)
        live = frame.values["step_time"]
        n = len(self._train)
        for family in self._job_wide:
            value = frame.job[family.key] / (n if family.key == "tokens_per_s" else 1)
            _series(out, family, [value if v == v else v for v in live], self._train)
        self._inspector(out, frame.values, frame.job["step"])
        out.append("")
        return "\n".join(out)

    def _tenant_series(self, out: list[str], family: Family, values: Sequence[float]
                       ) -> None:
        """The other jobs' GPUs, each reading as the job's typical GPU does."""
        present = [v for v in values if v == v]
        if not self._tenants or not present:
            return
        value = (family.convert or float)(statistics.median(present))
        out.extend(f"{family.name}{{{labels}}} {value:{family.spec}}"
                   for labels in self._tenants)

    def _inspector(self, out: list[str], values: dict[str, list[float]], step: float
                   ) -> None:
        """The Inspector's dump of the last step's all-reduce: labelled as the job's own
        series (as a cluster relabels them to the job), each dump a new coll_sn."""
        if not self._nccl:
            return
        n = len(self._train)
        dump = _labels([("collective", "AllReduce"), ("comm_id", NCCL_COMM_ID),
                        ("n_ranks", str(n)), ("n_nodes", str(len(self.cluster.rank_map.hosts))),
                        ("coll_sn", f"{step:.0f}")])
        labels = [f"{lbl},{dump}" for lbl in self._train]
        for family in self._nccl:
            _series(out, family, values[family.key], labels)

    def _xid(self, out: list[str], values: Sequence[float]) -> None:
        labels = []
        for i, code in enumerate(values):
            if code == code:
                err = [("err_code", f"{code:.0f}"),
                       ("err_msg", XID_MESSAGES.get(int(code), XID_UNKNOWN))]
                labels.append(_labels(self._dcgm[i] + sorted(self._attrs[i] + err)))
            else:
                labels.append("")
        _series(out, XID_FAMILY, values, labels)


def _series(out: list[str], family: Family, values: Sequence[float], labels: Sequence[str]
            ) -> None:
    """Append one family: HELP, TYPE, then one line per rank that has a value."""
    name, spec, convert = family.name, family.spec, family.convert or float
    out.append(f"# HELP {name} {family.help}")
    out.append(f"# TYPE {name} {family.kind}")
    out.extend(f"{name}{{{lbl}}} {convert(v):{spec}}"
               for v, lbl in zip(values, labels, strict=True) if v == v)


def _tenant_gpus(tenant: PlacedTenant) -> list[Rank]:
    """A tenant's GPUs as ranks of no job (-1), for their labels."""
    return [Rank(-1, tenant.host, gpu, tenant.node, uuid)
            for gpu, uuid in zip(tenant.gpus, tenant.uuids, strict=True)]


def render_metrics(cluster: SimCluster, t: float, options: ExportOptions | None = None) -> str:
    """One scrape of the cluster at t, in the Prometheus text format 0.0.4."""
    return MetricsRenderer(cluster, options).render(t)


class MetricsServer(ThreadingHTTPServer):
    """Serves ``/metrics`` from a renderer; t is seconds since the server was made + start."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], renderer: MetricsRenderer,
                 clock: Callable[[], float] = time.monotonic, start: float = 0.0) -> None:
        self.renderer = renderer
        self.clock = clock
        self.started = clock() - start
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/metrics"


def make_server(cluster: SimCluster, options: ExportOptions | None = None,
                host: str = "127.0.0.1", port: int = 9400,
                clock: Callable[[], float] = time.monotonic, start: float = 0.0) -> MetricsServer:
    """A bound, listening server (call serve_forever); raises OSError if the port is taken.

    The scenario runs from ``start`` seconds when the server is made.
    """
    return MetricsServer((host, port), MetricsRenderer(cluster, options), clock, start)


class _Handler(BaseHTTPRequestHandler):
    server: MetricsServer

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body = self.server.renderer.render(self.server.clock() - self.server.started)
            self._reply(200, CONTENT_TYPE, body)
        elif path == "/":
            self._reply(200, "text/plain; charset=utf-8",
                        "ranktop simulate: Prometheus metrics are at /metrics\n")
        else:
            self._reply(404, "text/plain; charset=utf-8", "not found; try /metrics\n")

    def _reply(self, status: int, content_type: str, text: str) -> None:
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Scrapes come every few seconds: no access log."""


DEFAULT_FLEET = Path("fleet.toml")  # --fleet alone: the shipped one


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)


def _number(kind: type, low: float, high: float, rule: str) -> Callable[[str], float]:
    """An argparse type: a number of ``kind`` in [low, high], else an error naming ``rule``."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {rule} (got {text!r})")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ranktop simulate", description="Serve the simulated cluster as "
                     "dcgm-exporter and per-rank training metrics for Prometheus to scrape.")
    add = parser.add_argument
    add("--port", type=_number(int, 0, 65535, "a port number 0-65535"), default=9400,
        help="TCP port (default 9400; 0 picks a free one)")
    add("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    add("--nodes", type=_number(int, 1, 65536, "a whole number 1-65536"), default=64,
        help="number of nodes (default 64)")
    add("--gpus-per-node", type=_number(int, 1, 64, "a whole number 1-64"), default=8,
        help="GPUs per node (default 8)")
    add("--seed", type=int, default=7, help="random seed (default 7)")
    add("--scenario", type=Path, metavar="FILE",
        help="scenario file (default: the shipped scenario.toml)")
    add("--demo-start", "--start", dest="start", default=0.0, metavar="SECONDS",
        type=_number(float, 0, 1e9, "a number of seconds >= 0"),
        help="scenario time to begin at, as the console's --demo-start (default 0; e.g. "
             "125: just before the ECC error)")
    add("--profile", choices=PROFILES, default="default",
        help="what to export: default (every metric ranktop reads), stock (only "
             "dcgm-exporter's default counters), k8s (stock, with Kubernetes labels as a "
             "Prometheus behind a ServiceMonitor stores them: exported_pod, ...)")
    add("--job-metrics", choices=JOB_METRIC_NAMES, default="ranktop",
        help="how the job names its own metrics: ranktop (its convention: "
             "training_step_seconds{training_job,rank,local_rank,hostname,gpu_uuid}) or foreign "
             "(training_step_duration_seconds, training_step_compute_seconds, "
             "training_iteration, train_loss, train_tokens_per_sec, labelled job, rank, "
             "local_rank and hostname, or pod with --profile k8s), for ranktop to discover")
    add("--job", help="the job's name in its metrics' job label (default: the scenario's "
                      "name)")
    add("--hostname-label", choices=("Hostname", "hostname"), default="Hostname",
        help="host label of the DCGM series: released dcgm-exporter says Hostname (default)")
    add("--no-sm-active", action="store_true",
        help="omit DCGM_FI_PROF_SM_ACTIVE, as dcgm-exporter's default counters do")
    add("--no-nvlink-bytes", action="store_true", help="omit DCGM_FI_PROF_NVLINK_TX/RX_BYTES, "
        "leaving only DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL")
    add("--no-dcgm", action="store_true",
        help="serve no DCGM series, only the job's own, which name no GPU UUID: a CPU job "
             "(gloo, no GPUs)")
    add("--kubernetes", action="store_true",
        help="add dcgm-exporter's own pod, namespace and container labels to the DCGM series "
             "(as Prometheus keeps them with honor_labels)")
    add("--nccl-inspector", action="store_true",
        help="also export NCCL Inspector's per-rank collective timings "
             "(nccl_collective_exec_time_microseconds, nccl_bus_bandwidth_gbs, "
             "nccl_algorithm_bandwidth_gbs)")
    add("--fleet", type=Path, nargs="?", const=DEFAULT_FLEET, metavar="FILE",
        help="serve a fleet of jobs instead of one, each on its own port from --port on "
             "(default: the shipped fleet.toml: the demo's job, healthy ones, one stalled, "
             "one that lost a rank)")
    add("--log-dir", type=Path, metavar="DIR",
        help="write the ranks' torchrun-style logs here (default: a temporary folder)")
    return parser


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _simulate_fleet(args: argparse.Namespace, options: ExportOptions) -> int:
    """`ranktop simulate --fleet`: every job of the fleet, each on its own port."""
    from .fleet import fleet_servers, load_fleet, serve_fleet

    try:
        jobs = load_fleet(None if args.fleet == DEFAULT_FLEET else args.fleet)
        servers = fleet_servers(jobs, args.host, args.port, args.start, args.gpus_per_node,
                                options)
    except ScenarioError as error:
        print(f"ranktop simulate: fleet error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"ranktop simulate: cannot listen for the fleet from {args.host}:{args.port}: "
              f"{error.strerror or error}", file=sys.stderr)
        return 2
    for job, server in zip(jobs, servers, strict=True):
        print(f"serving {job.name} ({len(server.renderer.cluster.rank_map)} ranks) on "
              f"{server.url}", flush=True)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)
    with contextlib.suppress(KeyboardInterrupt):
        serve_fleet(servers)
    return 0


def simulate_main(argv: Sequence[str] | None = None) -> int:
    """`ranktop simulate ...`: serve until Ctrl-C; the exit status (2 for bad flags or port)."""
    try:
        args = build_parser().parse_args(argv)
    except _UsageError as error:
        print(f"ranktop simulate: {error} (see ranktop simulate --help)", file=sys.stderr)
        return 2
    except SystemExit as done:  # --help
        return int(done.code or 0)
    if args.kubernetes and args.profile == "k8s":
        print("ranktop simulate: --kubernetes and --profile k8s both set the pod labels; "
              "use one (see ranktop simulate --help)", file=sys.stderr)
        return 2
    options = ExportOptions(job=args.job, hostname_label=args.hostname_label,
                            sm_active=not args.no_sm_active,
                            nvlink_bytes=not args.no_nvlink_bytes,
                            kubernetes=args.kubernetes, profile=args.profile,
                            job_metrics=args.job_metrics,
                            nccl_inspector=args.nccl_inspector, dcgm=not args.no_dcgm)
    if args.fleet is not None:
        return _simulate_fleet(args, options)
    try:
        scenario = load_scenario(args.scenario)
        cluster = SimCluster(args.nodes, args.gpus_per_node, args.seed, scenario)
        server = make_server(cluster, options, args.host, args.port, start=args.start)
    except ScenarioError as error:
        print(f"ranktop simulate: scenario error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        reason = "address already in use" if error.errno == errno.EADDRINUSE else (
            error.strerror or str(error))
        print(f"ranktop simulate: cannot listen on {args.host}:{args.port}: {reason}",
              file=sys.stderr)
        return 2
    print(f"serving {len(cluster.rank_map)} ranks on {server.url}", flush=True)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)  # a supervisor's stop is a clean exit too
    with tempfile.TemporaryDirectory(prefix="ranktop-simulate-") as folder:
        root = args.log_dir or Path(folder) / "logs"
        began = time.monotonic()
        # On Kubernetes each pod writes its own tree, named after the pod.
        job = server.renderer.job
        tree = ((lambda node: worker_pod(job, node))
                if args.kubernetes or args.profile == "k8s" else None)
        # Lines and dumps are dated in wall-clock time, as a real job's are: the console
        # leaves out dumps older than a stall, and reads a line's time against now.
        began_wall = time.time() - args.start
        dumps = FlightWriter(cluster, root / FLIGHT_FOLDER, args.seed, epoch=began_wall)
        writer = LogWriter(cluster, root, seed=args.seed, tree=tree, flight=dumps,
                           epoch=began_wall)
        stop = keep_writing(writer, lambda: args.start + time.monotonic() - began)
        print(f"writing the ranks' logs under {root} (ranktop --logs {writer.layout_spec})"
              f" and their Flight Recorder dumps when they hang (--flight-recorder"
              f" {dumps.spec})", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            stop()
            server.server_close()
    return 0

"""`ranktop simulate`: the simulated cluster served as dcgm-exporter and job metrics over HTTP.

One scrape of ``/metrics`` returns, in the Prometheus text format 0.0.4, what a Prometheus
scraping every node's dcgm-exporter and every rank's training metrics would hold: the
dcgm-exporter series (real names, types, help texts and labels) and ranktop's per-rank
``training_*`` convention. A dead rank has no series at all; absent means "no data".
"""

from __future__ import annotations

import argparse
import errno
import math
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ranktop.tui.core.model import Rank
from ranktop.tui.simulator.cluster import GPU_MODEL, SimCluster
from ranktop.tui.simulator.log_writer import LogWriter, keep_writing
from ranktop.tui.simulator.scenario import ScenarioError, load_scenario

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MODEL_NAME = GPU_MODEL
FB_TOTAL_MIB = 81559.0
MIB = 1048576.0
GR_OVER_SM = 1.04  # the graphics engine is busy a little more often than the SMs are
HGX_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)  # an 8-GPU HGX board's PCI buses
K8S_NAMESPACE = "training"
K8S_CONTAINER = "trainer"
XID_MESSAGES = {  # the few XIDs a training fleet pages on, as NVIDIA's catalog names them
    48: "DBE (Double Bit Error) ECC Error", 63: "ECC page retirement or row remapping event",
    74: "NVLINK Error", 79: "GPU has fallen off the bus", 94: "Contained ECC error",
    95: "Uncontained ECC error",
}


@dataclass(frozen=True)
class Family:
    """One exported metric: name, type, help, which Frame metric feeds it, and how."""

    name: str
    kind: str
    help: str
    key: str
    spec: str = ".0f"  # format spec of the value
    convert: Callable[[float], float] | None = None


DCGM_FAMILIES = (
    Family("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "gpu_util"),
    Family("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
           "Ratio of time the graphics engine is active.", "sm_active", ".6f",
           lambda v: max(v / 100.0, min(1.0, v * GR_OVER_SM / 100.0))),
    Family("DCGM_FI_PROF_SM_ACTIVE", "gauge",
           "The ratio of cycles an SM has at least 1 warp assigned.", "sm_active", ".6f",
           lambda v: v / 100.0),
    Family("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "temperature"),
    Family("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "power", ".3f"),
    Family("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "sm_clock"),
    Family("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons.",
           "throttle_reasons"),
    Family("DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge", "The number of bytes of active NvLink tx "
           "(transmit) data including both header and payload.", "nvlink_tx"),
    Family("DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge", "The number of bytes of active NvLink rx "
           "(read) data including both header and payload.", "nvlink_rx"),
    Family("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
           "Total number of NVLink bandwidth counters for all lanes.", "nvlink", ".0f",
           lambda v: v / MIB),  # typed counter by dcgm-exporter, but a MiB/s rate
    Family("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "memory_used"),
    Family("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "memory_used",
           ".0f", lambda v: FB_TOTAL_MIB - v),
    Family("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
           "Total number of double-bit volatile ECC errors.", "ecc_dbe"),
)
XID_FAMILY = Family("DCGM_FI_DEV_XID_ERRORS", "gauge",
                    "Value of the last XID error encountered.", "xid")
TRAINING_FAMILIES = (
    Family("training_step_seconds", "gauge",
           "Duration of the last completed training step (in s).", "step_time", ".6g"),
    Family("training_compute_seconds", "gauge",
           "Time of the last completed step spent outside collectives (in s).", "compute_time",
           ".6g"),
)
JOB_FAMILIES = (  # job-wide values, exported by every live rank
    Family("training_step", "gauge", "Current training step number.", "step"),
    Family("training_tokens_per_second", "gauge",
           "Tokens per second of the job divided by its number of ranks.", "tokens_per_s", ".6g"),
    Family("training_loss", "gauge", "Training loss of the job.", "loss", ".6g"),
)


@dataclass(frozen=True)
class ExportOptions:
    """What to export, and how, like dcgm-exporter's own switches."""

    job: str | None = None  # the training_job label; None: the scenario's name
    hostname_label: str = "Hostname"  # released dcgm-exporter; "hostname" on master
    sm_active: bool = True
    nvlink_bytes: bool = True
    kubernetes: bool = False


def escape(value: str) -> str:
    """A label value escaped for the text format."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def pci_bus_id(gpu: int, gpus_per_node: int) -> str:
    """A deterministic PCI bus id for a GPU index, in dcgm-exporter's format."""
    bus = HGX_BUSES[gpu] if gpus_per_node <= len(HGX_BUSES) else gpu * 256 // gpus_per_node
    return f"00000000:{bus:02X}:00.0"


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    return ",".join(f'{name}="{escape(value)}"' for name, value in pairs)


class MetricsRenderer:
    """Renders a cluster's scrape at any time t; label sets are built once."""

    def __init__(self, cluster: SimCluster, options: ExportOptions | None = None) -> None:
        self.cluster = cluster
        self.options = options or ExportOptions()
        self.job = self.options.job or cluster.job_name
        ranks = cluster.rank_map.ranks
        self._dcgm = [self._dcgm_labels(r) for r in ranks]
        self._attrs = [self._k8s_attrs(r) for r in ranks]
        self._gpu = [_labels(d + sorted(a)) for d, a in zip(self._dcgm, self._attrs, strict=True)]
        self._train = [_labels([
            ("training_job", self.job), ("rank", str(r.rank)), ("local_rank", str(r.gpu)),
            ("hostname", r.host), ("gpu_uuid", r.uuid),
        ]) for r in ranks]
        left_out = {"DCGM_FI_PROF_SM_ACTIVE"} if not self.options.sm_active else set()
        if not self.options.nvlink_bytes:
            left_out |= {"DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES"}
        self._families = [f for f in DCGM_FAMILIES if f.name not in left_out]

    def _dcgm_labels(self, rank: Rank) -> list[tuple[str, str]]:
        return [
            ("gpu", str(rank.gpu)), ("UUID", rank.uuid),
            ("pci_bus_id", pci_bus_id(rank.gpu, self.cluster.rank_map.gpus_per_node)),
            ("device", f"nvidia{rank.gpu}"), ("modelName", MODEL_NAME),
            (self.options.hostname_label, rank.host),
        ]

    def _k8s_attrs(self, rank: Rank) -> list[tuple[str, str]]:
        if not self.options.kubernetes:
            return []
        pod = re.sub(r"[^a-z0-9-]+", "-", self.job.lower()).strip("-") or "job"  # DNS-1123
        return [("pod", f"{pod}-worker-{rank.node}"), ("namespace", K8S_NAMESPACE),
                ("container", K8S_CONTAINER)]

    def render(self, t: float) -> str:
        """The whole scrape at t seconds since the simulation started."""
        frame = self.cluster.frame_at(t)
        out: list[str] = []
        for family in self._families:
            _series(out, family, frame.values[family.key], self._gpu)
        self._xid(out, frame.values["xid"])
        for family in TRAINING_FAMILIES:
            _series(out, family, frame.values[family.key], self._train)
        live = frame.values["step_time"]
        n = len(self._train)
        for family in JOB_FAMILIES:
            value = frame.job[family.key] / (n if family.key == "tokens_per_s" else 1)
            _series(out, family, [value if v == v else v for v in live], self._train)
        out.append("")
        return "\n".join(out)

    def _xid(self, out: list[str], values: Sequence[float]) -> None:
        labels = []
        for i, code in enumerate(values):
            if code == code:
                err = [("err_code", f"{code:.0f}"),
                       ("err_msg", XID_MESSAGES.get(int(code), "Unknown Error"))]
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
    add("--start", type=_number(float, 0, 1e9, "a number of seconds >= 0"), default=0.0,
        metavar="SECONDS",
        help="scenario time to begin at (default 0; e.g. 125: just before the ECC error)")
    add("--job", help="training_job label (default: the scenario's name)")
    add("--hostname-label", choices=("Hostname", "hostname"), default="Hostname",
        help="host label of the DCGM series: released dcgm-exporter says Hostname (default)")
    add("--no-sm-active", action="store_true",
        help="omit DCGM_FI_PROF_SM_ACTIVE, as dcgm-exporter's default counters do")
    add("--no-nvlink-bytes", action="store_true", help="omit DCGM_FI_PROF_NVLINK_TX/RX_BYTES, "
        "leaving only DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL")
    add("--kubernetes", action="store_true",
        help="add pod, namespace and container labels to the DCGM series")
    add("--log-dir", type=Path, metavar="DIR",
        help="write the ranks' torchrun-style logs here (default: a temporary folder)")
    return parser


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def simulate_main(argv: Sequence[str] | None = None) -> int:
    """`ranktop simulate ...`: serve until Ctrl-C; the exit status (2 for bad flags or port)."""
    try:
        args = build_parser().parse_args(argv)
    except _UsageError as error:
        print(f"ranktop simulate: {error} (see ranktop simulate --help)", file=sys.stderr)
        return 2
    except SystemExit as done:  # --help
        return int(done.code or 0)
    options = ExportOptions(args.job, args.hostname_label, not args.no_sm_active,
                            not args.no_nvlink_bytes, args.kubernetes)
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
        stop = keep_writing(LogWriter(cluster, root, seed=args.seed),
                            lambda: args.start + time.monotonic() - began)
        print(f"writing the ranks' logs under {root} (ranktop --logs torchrun:{root})",
              flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            stop()
            server.server_close()
    return 0

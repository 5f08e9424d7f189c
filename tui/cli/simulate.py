"""`ranktop simulate`: its flags, and the simulated cluster served until Ctrl-C or SIGTERM
(``simulator/exporter.py`` renders and serves the metrics; ``simulator/log_writer.py`` and
``simulator/flight_writer.py`` write the ranks' logs and dumps)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ..simulator.cluster import SimCluster
from ..simulator.exporter import ExportOptions, make_server, worker_pod
from ..simulator.families import JOB_METRIC_NAMES, PROFILES
from ..simulator.flight_writer import FLIGHT_FOLDER, FlightWriter
from ..simulator.log_writer import LogWriter, keep_writing
from ..simulator.scenario import ScenarioError, load_scenario
from . import flags

DEFAULT_FLEET = Path("fleet.toml")  # --fleet alone: the shipped one


def simulate_parser() -> flags.Parser:
    parser = flags.Parser(prog="ranktop simulate", description="Serve the simulated cluster as "
                     "dcgm-exporter and per-rank training metrics for Prometheus to scrape.")
    add = parser.add_argument
    add("--port", type=flags.number(int, 0, 65535, "a port number 0-65535"), default=9400,
        help="TCP port (default 9400; 0 picks a free one)")
    add("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    add("--nodes", type=flags.number(int, 1, 65536, "a whole number 1-65536"), default=64,
        help="number of nodes (default 64)")
    add("--gpus-per-node", type=flags.number(int, 1, 64, "a whole number 1-64"), default=8,
        help="GPUs per node (default 8)")
    add("--seed", type=int, default=7, help="random seed (default 7)")
    add("--scenario", type=Path, metavar="FILE",
        help="scenario file (default: the shipped scenario.toml)")
    add("--demo-start", "--start", dest="start", default=0.0, metavar="SECONDS",
        type=flags.number(float, 0, 1e9, "a number of seconds >= 0"),
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
    from ..simulator.fleet import fleet_servers, load_fleet, serve_fleet

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
        args = simulate_parser().parse_args(argv)
    except SystemExit as done:  # --help, or a bad flag said in one line
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

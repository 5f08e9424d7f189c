"""XIDs with different resolutions, the whole path: simulator -> real Prometheus ->
analysis -> `ranktop report --json`'s "actions": a contained ECC error resets its GPU when
idle, an NVLink error whose GPU asks to drain peer-to-peer drains its node, the
application's own XID gets no hardware action."""

from __future__ import annotations

import json

import pytest
from ranktop.tui.cli.main import main

from tests.integration.cluster import HERE, Prometheus, served

JOB = "integration-xids"
RANKS = 24  # three nodes of eight: XID 94 on rank 3, XID 13 on rank 10, XID 74 on rank 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with served(tmp_path_factory.mktemp("xids"), HERE / "scenario-xids.toml", JOB, RANKS,
                seed=23, nodes=3) as server:
        yield server


def report(server: Prometheus, capsys) -> list[dict]:
    main(["report", "--prometheus", server.url, "--job", JOB, "--json"])
    return json.loads(capsys.readouterr().out)["actions"]


def test_each_xid_gets_the_action_its_resolution_and_recovery_ask_for(server, capsys):
    found = {(a["kind"], a["node"]): a for a in report(server, capsys)}
    reset = found[("reset", "gpu-node-000")]
    assert (reset["gpu"], reset["rank"]) == (3, 3)
    assert reset["text"] == ("reset GPU 3 on gpu-node-000 when idle (XID 94: contained ECC "
                             "error; recovery action: reset)")
    drain = found[("drain", "gpu-node-002")]
    assert drain["text"] == ("drain gpu-node-002 (XID 74: NVLink error; recovery action: drain "
                             "peer-to-peer)")
    assert drain["rule"] == "the GPU's recovery action is drain peer-to-peer"
    nothing = [a["text"] for a in found.values() if a["kind"] == "nothing"]
    assert nothing == ["nothing to do on hardware: XID 13: graphics engine exception is the "
                       "application's, not the GPU's"]
    assert not [key for key in found if key[1] == "gpu-node-001" and key[0] != "nothing"]

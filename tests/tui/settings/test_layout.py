"""The demo job's parallelism, from [demo], lays out its maps unless the user's [layout]
gives one."""

from __future__ import annotations

from ranktop.tui.core.config_values import LayoutSettings
from ranktop.tui.core.parallelism import fit_world, parse
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.layout import with_job_parallelism


def test_the_demo_has_a_parallelism_that_fits_its_512_ranks(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # the shipped defaults only
    settings = load_settings()
    layout = with_job_parallelism(settings.layout, settings.demo.parallelism)
    assert layout.parallelism is not None
    ranks = settings.demo.nodes * settings.demo.gpus_per_node
    fitted = fit_world(layout.parallelism, ranks)
    assert (fitted.stages, fitted.replicas) == (4, 16)
    assert layout.view == "node"  # `t` switches to it; the maps start by node


def test_a_parallelism_of_the_users_own_comes_first():
    own = LayoutSettings(parse("tp=4,pp=8"), "parallelism")
    assert with_job_parallelism(own, parse("tp=8,pp=4")) is own


def test_without_one_the_layout_stays_by_node():
    assert with_job_parallelism(LayoutSettings(), None).parallelism is None

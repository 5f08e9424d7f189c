"""A dump's groups under the names its entries use; pg_status's frontiers, -1 as unknown."""

from __future__ import annotations

from ranktop.tui.core.hang.flight import Frontier, Group
from ranktop.tui.flight.groups import dump_groups, frontiers

GLOO_2_14 = {"": {"name": "", "desc": "", "ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}


def test_the_unnamed_group_is_the_entries_default_group() -> None:
    groups = dump_groups(GLOO_2_14, {"0": "default_pg"})
    assert groups == {"0": Group("0", "default_pg", tuple(range(8)))}


def test_the_one_group_left_on_each_side_is_matched_and_named_groups_stay() -> None:
    config = {"0": {"name": "0", "desc": "default_pg", "ranks": [0, 1, 2, 3]},
              "x": {"name": "x", "desc": "", "ranks": [0, 1]}}
    groups = dump_groups(config, {"0": "default_pg", "5": "tp"})
    assert groups["0"].ranks == (0, 1, 2, 3) and groups["5"] == Group("5", "tp", (0, 1))
    assert "x" not in groups


def test_no_plain_match_leaves_the_groups_as_configured() -> None:
    config = {"a": [0, 1], "b": [2, 3]}
    groups = dump_groups(config, {"1": "tp", "2": "dp"})
    assert sorted(groups) == ["a", "b"] and groups["a"].ranks == (0, 1)


def test_frontiers_by_pg_id_or_name_with_minus_one_unknown() -> None:
    status = {"0": {"last_enqueued_collective": 415, "last_started_collective": -1,
                    "last_completed_collective": "415"},
              "tp": {"last_enqueued_collective": 3}}
    found = frontiers(status, {"0": "0"}, {"tp": ""})
    assert found == {"0": Frontier(415, None, 415), "tp": Frontier(3, None, None)}

"""The hang verdict on the logs a real gloo job wrote: the ranks that timed out waiting or
gave up on a peer gone are the consequence, never the culprits; the rank they waited for is."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.hang.agent_exit import agent_exits
from ranktop.tui.core.hang.frozen import FROZEN_AFTER_SECONDS, FrozenRanks
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.model import RankMap

from tests.tui.core.real_logs import gloo_logs
from tests.tui.core.test_watchdog import NCCL2_DUMP, NCCL2_TIMEOUT

WAITERS = [0, 1, 2, 3, 4, 5, 7]


def test_seven_gloo_timeouts_and_a_frozen_rank_blame_no_waiter():
    verdict = triage(gloo_logs("frozen"), world_size=8)
    assert verdict is not None
    assert verdict.dead == [] and verdict.behind == []
    assert verdict.reporting == WAITERS and verdict.silent == [6] and verdict.awaited == [6]
    assert verdict.summary == ("not sure yet: 7 of 8 live ranks logged a timeout; waiting for"
                               " 1 more (rank 6)")
    assert "Timed out waiting 10000ms" in verdict.evidence[0][0]


def test_the_frozen_rank_is_named_once_it_stays_the_only_one_without_a_timeout():
    verdict = triage(gloo_logs("frozen"), world_size=8)
    assert verdict is not None
    frozen = FrozenRanks()
    assert not frozen.judge(replace(verdict, as_of=100.0)).sure
    named = frozen.judge(replace(verdict, as_of=100.0 + FROZEN_AFTER_SECONDS))
    assert named.sure and named.behind == [6] and named.dead == []
    assert named.summary.startswith("rank 6 is frozen, the others wait for it: it logged no"
                                    " timeout, the other 7 live ranks did")


def test_a_frozen_rank_whose_series_vanished_is_the_one_culprit():
    verdict = triage(gloo_logs("frozen"), world_size=8, gone=[6])
    assert verdict is not None and verdict.sure
    assert verdict.dead == [6] and verdict.behind == [6] and verdict.reporting == WAITERS
    assert verdict.summary.startswith("rank 6 is not reporting (its series vanished):"
                                      " 7 of 7 live ranks"
                                      " timed out")


def test_ranks_that_timed_out_and_exited_are_no_culprits_when_their_series_vanish():
    # The waiters' processes end after their timeout: their series vanish before the
    # frozen rank's is noticed. Three of eight is few enough to trust what vanished.
    verdict = triage(gloo_logs("frozen"), world_size=8, gone=[0, 1, 2])
    assert verdict is not None and verdict.dead == [] and verdict.behind == []
    assert verdict.awaited == [6]


def test_the_frozen_rank_stays_the_culprit_when_every_waiter_exits_and_vanishes():
    # 60 s on, the seven waiters raised gloo's timeout and exited: every series is gone,
    # and what their logs show explains theirs; the frozen rank's vanishing stays unexplained
    before = triage(gloo_logs("frozen"), world_size=8, gone=[6])
    after = triage(gloo_logs("frozen"), world_size=8, gone=list(range(8)))
    assert after is not None and after.sure and after.behind == before.behind == [6]
    assert after.dead == [6] and after.reporting == WAITERS
    assert after.summary.startswith("rank 6 is not reporting (its series vanished): 7 of 7")
    assert "going down" not in after.summary


def test_a_job_whose_ranks_all_vanish_without_a_word_names_none_of_them():
    quiet = {rank: [f"step {n} loss 0.1" for n in range(5)] for rank in range(8)}
    assert triage(quiet, world_size=8, gone=list(range(8))) is None


def test_ranks_that_gave_up_on_a_killed_peer_are_no_culprits_when_their_series_vanish():
    verdict = triage(gloo_logs("killed"), world_size=8, gone=[5, 6, 7])
    assert verdict is not None and verdict.sure
    assert verdict.dead == [6] and verdict.behind == [6]
    assert verdict.reporting == [5, 7]
    assert verdict.summary.endswith("ranks 5, 7 gave up on a peer (remote error)")


JOB = RankMap.grid(["node-a", "node-b"], 4, source="test")
AGENT = ("E1128 15:13:33.873000 15776 torch/distributed/elastic/multiprocessing/api.py:1002]"
         " failed (exitcode: {code}) local_rank: {local} (pid: 15864) of binary: python3")


def agent_said(node: str, local: int, code: int) -> dict:
    return agent_exits({node: [AGENT.format(code=code, local=local)]}, JOB)


def test_the_rank_its_agent_saw_killed_is_the_one_culprit_its_node_mates_stopped():
    # kill -9 of rank 6: its node's agent ends ranks 4 (and 5, 7, which gave up first);
    # every series of the node vanished in the same scrape, so they alone cannot tell
    verdict = triage(gloo_logs("killed"), world_size=8, gone=[4, 5, 6, 7],
                     exits=agent_said("node-b", 2, -9))
    assert verdict is not None and verdict.sure
    assert verdict.dead == [6] and verdict.behind == [6] and verdict.stopped == [4]
    assert verdict.reporting == [5, 7]
    assert verdict.summary.startswith("rank 6 is dead (its agent saw it exit -9 (SIGKILL) at"
                                      " 15:13:33, its series vanished)")
    assert "rank 4 was stopped by its agent" in verdict.summary
    assert "no live rank timed out;" in verdict.summary  # none of them logged a timeout
    assert "ranks 5, 7 gave up on a peer" in verdict.summary
    assert AGENT.format(code=-9, local=2) in verdict.evidence[6]


def test_without_the_agent_s_word_ranks_gone_in_one_scrape_are_not_told_apart():
    verdict = triage(gloo_logs("killed"), world_size=8, gone=[4, 6])
    assert verdict is not None and verdict.dead == [4, 6] and verdict.stopped == []
    assert verdict.summary.startswith("ranks 4, 6 are not reporting")


def test_the_first_to_exit_leads_the_dead():
    exits = agent_exits({"node-b": [AGENT.format(code=-9, local=2)],
                         "node-a": [AGENT.replace("15:13:33", "15:13:31").format(
                             code=-6, local=1)]}, JOB)
    verdict = triage(gloo_logs("killed"), world_size=8, gone=[1, 6], exits=exits)
    assert verdict is not None and verdict.dead == [1, 6] and verdict.behind[0] == 1


def test_a_frozen_rank_stays_the_culprit_when_its_waiters_exit_by_their_agents_word():
    # the peers time out and exit 1: their agents say so; the frozen rank's agent says
    # nothing of it, and its waiters' exits are the hang's consequences
    exits = {**agent_said("node-a", 2, 1), **agent_said("node-b", 1, 1)}
    verdict = triage(gloo_logs("frozen"), world_size=8, gone=[0, 1, 2, 6], exits=exits)
    assert verdict is not None and verdict.sure
    assert verdict.dead == [6] and verdict.behind == [6] and verdict.stopped == []
    assert verdict.reporting == WAITERS
    assert verdict.summary.startswith("rank 6 is not reporting (its series vanished): 7 of 7"
                                      " live ranks timed out")


def test_a_ranks_own_error_names_it_and_its_peers_gone_are_not_blamed():
    verdict = triage(gloo_logs("user_error"), world_size=4)
    assert verdict is not None and verdict.sure
    assert verdict.dead == [2] and verdict.behind == [2] and verdict.reporting == [1, 3]
    assert verdict.summary.startswith(
        "rank 2 is dead (exited: ValueError: bad batch shape (3, 224) for model input)")


def test_nccl2_timeouts_make_waiters_and_their_dumps_are_evidence():
    steps = [f"step {n} loss 2.1370" for n in range(4170, 4181)]
    logs = {rank: [*steps, f"[rank{rank}]: {NCCL2_TIMEOUT}",
                   f"[rank{rank}]: {NCCL2_DUMP.replace('rank_3', f'rank_{rank}')}"]
            for rank in (0, 1, 3)}
    logs[2] = steps
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.dead == [] and verdict.awaited == [2]
    assert verdict.reporting == [0, 1, 3]
    assert verdict.evidence[1] == [logs[1][-2], logs[1][-1]]  # the timeout, then the dump
    assert verdict.evidence[1][-1].endswith("/var/tmp/nccl_trace_rank_1")


def test_ranks_silent_after_a_kill_are_not_named_frozen():
    # torchrun ended the killed rank's node-mates before they said anything: only ranks 5
    # and 7 gave up on it, none timed out; the silent six are not frozen.
    verdict = triage(gloo_logs("killed"), world_size=8)
    assert verdict is not None and verdict.gave_up == [5, 7] and len(verdict.awaited) == 6
    frozen = FrozenRanks()
    frozen.judge(replace(verdict, as_of=100.0))
    later = frozen.judge(replace(verdict, as_of=100.0 + 5 * FROZEN_AFTER_SECONDS))
    assert not later.sure and later.behind == []


def test_two_frozen_ranks_are_named_together_once_time_has_passed():
    logs = gloo_logs("frozen")
    logs[5] = logs[5][:10]  # its steps only: as silent as rank 6
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.awaited == [5, 6] and verdict.gave_up == []
    frozen = FrozenRanks()
    frozen.judge(replace(verdict, as_of=100.0))
    named = frozen.judge(replace(verdict, as_of=100.0 + FROZEN_AFTER_SECONDS))
    assert named.sure and named.behind == [5, 6]
    assert named.summary == ("ranks 5, 6 are frozen, the others wait for them: they logged no"
                             " timeout, the other 6 live ranks did; each still none 10 s after"
                             " the others'")

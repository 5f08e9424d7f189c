"""A partial answer on screen, as the on-call engineer reads it: the header says PARTIAL and
why, the ranks left out are counted as not answered (never as missing), the maps' key and
the rank's line name them so."""

from __future__ import annotations

import math
from dataclasses import replace

from ranktop.tui.core.model import Health, SourceStatus

from tests.tui.conftest import make_app, screen_text

REASON = ("remote_read: error sending request: Post \"http://shard-b:9090/api/v1/read\": "
          "dial tcp 10.0.0.9:9090: connect: connection refused")
BEHIND = frozenset(range(256, 512))  # nodes 32..63: the stopped shard's


def behind_a_stopped_shard(source) -> None:
    """``source`` read through a front whose shard holding ``BEHIND`` does not answer."""
    poll = source.poll

    async def partial_poll():
        frame = await poll()
        values = {m: [math.nan if r in BEHIND else v for r, v in enumerate(vs)]
                  for m, vs in frame.values.items()}
        source._status = SourceStatus(source.name, Health.SLOW, since=frame.time,
                                      message=f"1 part of the backend failed — "
                                              f"10.0.0.9:9090: connection refused; "
                                              f"{len(BEHIND)} ranks not answered",
                                      last_ok=frame.time, partial=(REASON,))
        return replace(frame, values=values, unknown=BEHIND)

    source.poll = partial_poll


async def test_the_ranks_a_partial_answer_left_out_read_as_not_answered_not_missing():
    app = make_app(at=20.0)
    async with app.run_test(size=(160, 45)) as pilot:
        await app.poll_once()
        await pilot.pause()
        behind_a_stopped_shard(app.engine.pipeline.source)
        for _ in range(3):
            app.clock.now += 2.0
            await app.poll_once()
            await pilot.pause()
        text = screen_text(app)
        assert "● PARTIAL for" in text and "10.0.0.9:9090: connection refused" in text
        assert "◇ 256 not answered (partial)" in text
        assert "missing" not in text  # 256 ranks without data, none of them down
        assert "not answered" in text.split("SM activity")[1]  # the maps' key
        app.cluster.cursor = 300
        await pilot.pause()
        assert "not answered: the backend's answer is partial" in screen_text(app)

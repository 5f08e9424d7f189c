"""The whole-job fail-slow detector: a CUSUM on the job's step time."""

from __future__ import annotations

import random
import re

from ranktop.tui.core.detect.failslow import FailSlow


def feed(detector: FailSlow, levels, noise: float, seed: int = 1, start: float = 0.0,
         explained=lambda t: False):
    """Polls every 2 s; ``levels(t)`` is the step time's true level. Returns (t, anomalies)."""
    rng = random.Random(seed)
    out = []
    for i in range(len(levels)):
        t = start + 2.0 * i
        value = levels[i] * (1 + rng.gauss(0, noise))
        out.append((t, detector.update(t, value, explained(t))))
    return out


def test_a_noisy_stable_step_time_never_alarms():
    for seed in range(5):
        detector = FailSlow(0.10, 30)
        seen = feed(detector, [1.12] * 1800, noise=0.03, seed=seed)  # an hour, 3 % noise
        assert not any(found for _, found in seen), seed


def test_a_lasting_shift_is_flagged_with_when_it_began_and_confirmed_once_it_held():
    detector = FailSlow(0.10, 30)
    levels = [1.12] * 60 + [1.12 * 1.15] * 60  # +15 % from t = 120 s
    seen = feed(detector, levels, noise=0.01)
    flagged = [(t, found[0]) for t, found in seen if found]
    first_t, first = flagged[0]
    assert first.kind == "fail_slow" and first.rank is None and first.pending
    assert 120 <= first.since <= 126 and first_t <= 140
    assert re.search(r"\+1[45]% over its level before \(1\.12 s\) since 00:02:00", first.summary)
    confirmed = next(t for t, a in flagged if a.confirmed)
    assert confirmed - first_t >= 30 - 0.5


def test_a_shift_under_the_bar_or_a_short_one_is_not_flagged():
    small = feed(FailSlow(0.10, 30), [1.12] * 60 + [1.12 * 1.06] * 100, noise=0.01)
    assert not any(found for _, found in small)
    blip = feed(FailSlow(0.10, 30), [1.12] * 60 + [1.12 * 1.3] * 2 + [1.12] * 60, noise=0.01)
    assert not any(found for _, found in blip)


def test_the_alarm_ends_when_the_job_is_back_to_its_level():
    seen = feed(FailSlow(0.10, 30), [1.12] * 60 + [1.4] * 40 + [1.12] * 40, noise=0.01)
    assert any(found for _, found in seen[60:100])
    assert not any(found for _, found in seen[-20:])


def test_polls_a_straggler_explains_are_left_out():
    levels = [1.12] * 60 + [1.4] * 40 + [1.12] * 40
    seen = feed(FailSlow(0.10, 30), levels, noise=0.01, explained=lambda t: 120 <= t < 200)
    assert not any(found for _, found in seen)

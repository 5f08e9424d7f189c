"""The loss rule: a job's ordinary noise is no alarm, a spike is one for as long as it stays."""

from __future__ import annotations

import random

from ranktop.tui.core.detect.loss_rule import MIN_SAMPLES, LossRule

POLL = 2.0


def _rule() -> LossRule:
    return LossRule(window_seconds=120, rise=0.25, spreads=6)


def _noisy(level: float, seconds: float, start: float = 0.0, seed: int = 3,
           spread: float = 0.08) -> list[tuple[float, float]]:
    """A per-step loss as a real job logs it: its level, and each batch's own noise."""
    rng = random.Random(seed)
    return [(start + i * POLL, level * (1 + rng.gauss(0, spread)))
            for i in range(int(seconds / POLL))]


def _alarms(rule: LossRule, values: list[tuple[float, float]]) -> list[float]:
    return [when for when, loss in values if rule.judge(when, loss)]


def test_ten_minutes_of_ordinary_noise_raise_nothing() -> None:
    values = _noisy(2.0, 600)
    # the premise: this noise crosses 1.25x its lowest of two minutes, as real losses do
    crossings = [when for i, (when, loss) in enumerate(values)
                 if loss > 1.25 * min(v for t, v in values[:i + 1] if t >= when - 120)]
    assert crossings, "the noise must cross the old rule's bar, or this test proves nothing"
    assert _alarms(_rule(), values) == []


def test_a_spike_that_plateaus_is_held_for_as_long_as_it_stays() -> None:
    rule = _rule()
    calm = _noisy(0.09, 120, spread=0.03)
    assert _alarms(rule, calm) == []
    plateau = _noisy(1.2, 300, start=120, seed=4, spread=0.03)
    assert _alarms(rule, plateau) == [when for when, _ in plateau]
    said = rule.judge(420.0, 1.2) or ""
    assert said.startswith("loss 1.200, 13.44x its usual level (0.089 ± 0.003 over the last")
    after = _noisy(0.09, 60, start=422, seed=5, spread=0.03)
    assert _alarms(rule, after) == []


def test_a_slow_divergence_is_caught() -> None:
    rule = _rule()
    calm = _noisy(2.1, 120, spread=0.01)
    rising = [(120 + i * POLL, 2.1 + 0.05 * i) for i in range(30)]
    alarms = _alarms(rule, calm + rising)
    assert alarms and alarms[0] <= 120 + 12 * POLL


def test_a_falling_loss_is_no_alarm_and_nothing_is_judged_before_enough_values() -> None:
    rule = _rule()
    first = [(i * POLL, 5.0) for i in range(MIN_SAMPLES - 1)]
    assert _alarms(rule, [*first, (20.0, 50.0)]) == []  # too few values yet: no bar
    falling = [(40 + i * POLL, 5.0 * 0.98**i) for i in range(100)]
    assert _alarms(_rule(), falling) == []

"""When the header may call a poll late, or the job stalled, given how long polls take and
how often the data is sampled.

A fixed threshold misleads at scale: where a poll takes 4 s and the exporters are scraped
every 5 s, a poll running past the 2 s refresh is no news, and a step that moves every few
seconds can look still for a scrape interval and a poll on top of it.
"""

from __future__ import annotations

# A job whose step has not moved for this long (at least) has made no progress.
NO_PROGRESS_SECONDS = 10.0
LATE_FACTOR = 2.0  # a poll is late once it has run this many times as long as the last one


def late_after(refresh: float, poll_seconds: float) -> float:
    """How long a poll may run before it is late: a refresh interval, or twice as long as
    the last poll took, whichever is longer."""
    return max(refresh, LATE_FACTOR * poll_seconds)


def no_progress_after(refresh: float, poll_seconds: float, sample_interval: float) -> float:
    """How long the step may look still before it is called no progress: at least
    NO_PROGRESS_SECONDS, and twice the longest a moving step can look still (a sample
    interval, a refresh, and a poll)."""
    return max(NO_PROGRESS_SECONDS, 2.0 * (sample_interval + refresh + poll_seconds))

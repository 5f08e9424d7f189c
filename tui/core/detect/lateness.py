"""When the header may call a poll late, its data old, or the job stalled, given how long
polls take and how often the data is sampled.

A fixed threshold misleads at scale: where a poll takes 4 s and the exporters are scraped
every 5 s, a poll running past the 2 s refresh is no news, and a step that moves every few
seconds can look still for a scrape interval and a poll on top of it.
"""

from __future__ import annotations

# A job whose step has not moved for this long (at least) has made no progress.
NO_PROGRESS_SECONDS = 10.0
LATE_FACTOR = 2.0  # a poll is late once it has run this many times as long as the last one
# Data younger than this is never called old: where the data is sampled every second, a
# poll or two of a few seconds is no news.
OLD_DATA_SECONDS = 10.0


def late_after(refresh: float, poll_seconds: float) -> float:
    """How long a poll may run before it is late: a refresh interval, or twice as long as
    the last poll took, whichever is longer."""
    return max(refresh, LATE_FACTOR * poll_seconds)


def no_progress_after(refresh: float, poll_seconds: float, sample_interval: float) -> float:
    """How long the step may look still before it is called no progress: at least
    NO_PROGRESS_SECONDS, and twice the longest a moving step can look still (a sample
    interval, a refresh, and a poll)."""
    return max(NO_PROGRESS_SECONDS, 2.0 * (sample_interval + refresh + poll_seconds))


def old_data_after(refresh: float, sample_interval: float) -> float:
    """How old the data shown (since its poll began) may grow before the header calls it
    old: at least OLD_DATA_SECONDS, and two sample intervals and a refresh. Between two
    polls' frames the age grows by the wait between them (a refresh, or a poll where
    longer) and by the next poll's time; polls of up to a sample interval each lose nothing
    (the data changes no more often than that), and stay within the bound."""
    return max(OLD_DATA_SECONDS, 2.0 * sample_interval + refresh)

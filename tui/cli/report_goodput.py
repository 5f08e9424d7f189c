"""What `ranktop report` says of goodput in text: the share of the last hour, since ranktop
began watching and since the job began spent making progress, and the time lost by cause.
In JSON it is the document's "goodput" (``core/document.py``)."""

from __future__ import annotations

import math

from ..core.detect.goodput import CAUSES, Goodput, duration_text, share_text

SHOWN_LOST_SECONDS = 5.0  # less than this lost to a cause is the step counter's rounding


def goodput_line(goodput: Goodput, live: bool = True) -> str:
    """"goodput: 62 % of the last hour, 62 % since ranktop started (15 min), ...; lost in
    the last hour: hang 9 min, ..."; "goodput: unknown (...)" before it can be said. A past
    moment (not ``live``) was watched from its replay's first frame."""
    if not goodput.known:
        return "goodput: unknown (no step counter yet, or no healthy step seen)"
    shares = [f"{share_text(goodput)} of the last hour"]
    if not math.isnan(goodput.since_start):
        since = "since ranktop started" if live else "over the minutes replayed"
        shares.append(f"{100 * goodput.since_start:.0f} % {since} "
                      f"({duration_text(goodput.watched)})")
    if not math.isnan(goodput.job):
        shares.append(f"{100 * goodput.job:.0f} % since the job began")
    lost = [f"{cause} {duration_text(goodput.lost[cause])}" for cause in CAUSES
            if goodput.lost.get(cause, 0.0) >= SHOWN_LOST_SECONDS]
    said = f"goodput: {', '.join(shares)} (healthy step {goodput.baseline_step:.2f} s)"
    return f"{said}; lost in the last hour: {', '.join(lost) or 'nothing'}"

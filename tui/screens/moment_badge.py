"""What every screen says while it shows a past moment instead of the live job:
``AT 03:12:40 CET · 14 min ago · press L for live``; in a bundle reopened,
``BUNDLE OF 03:12:40 UTC · 14 min ago · not live``; a moment asked for and not shown yet,
``loading 03:10:40…``. The words stand alone, without colour, and nothing in them claims
to be current. The badge names the zone every time on screen is in, once: where a moment's
time matters, and where a bundle made in another zone is read."""

from __future__ import annotations

from ..core.moment import ago, shown, shown_zoned


def moment_badge(moment: float, now: float, live_key: str,
                 replaying: float | None = None, bundle: float | None = None) -> str:
    """The badge for the moment shown; ``replaying``: a moment loading meanwhile;
    ``bundle``: the moment of the bundle reopened, which stands for live there."""
    opened = bundle is not None and moment == bundle
    when = shown_zoned(moment)
    parts = [f"BUNDLE OF {when}" if opened else f"AT {when}",
             f"{ago(now - moment)} ago"]
    if replaying is not None and replaying != moment:
        parts.append(f"loading {shown(replaying)}…")
    if opened:
        parts.append("not live")
    else:
        parts.append(f"press {live_key} for {'the bundle' if bundle is not None else 'live'}")
    return f" {' · '.join(parts)} "


def replaying_badge(replaying: float) -> str:
    """The badge while the live job is still shown and a moment is loading."""
    return f" loading {shown(replaying)}… "

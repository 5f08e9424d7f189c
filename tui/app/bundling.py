"""The console's bundle key: the incident on screen handed over in one file (``tui/bundle``).

The screen is captured on the UI's thread (what the user sees, colours included); the rest
is gathered and written in a worker, and a notice names the path when it is done. A bundle
reopened (`ranktop open`) shows its own moment as the console's "live"."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual import work
from textual.binding import Binding

from ..bundle.make import Screen, make_bundle
from ..bundle.write import sharing
from ..engine.snapshot import Snapshot

if TYPE_CHECKING:
    from .console import RanktopApp

BUNDLE_BINDING = Binding(
    "B", "bundle", "Bundle", id="app.bundle",
    tooltip="Write this incident's bundle to hand over: the screen, the verdicts and their "
            "evidence, the queries and the settings (no secrets); `ranktop open` reopens it")


class BundleMode:
    """Mixed into the app: the bundle key."""

    bundle_writing: bool = False

    def action_bundle(self: RanktopApp) -> None:
        if self.bundle_writing:
            self.notify("a bundle is being written already", title="bundle", timeout=4)
            return
        self.bundle_writing = True
        screen = Screen(self.export_screenshot(), shown_text(self))
        self.write_bundle(self.shown_snapshot(), screen)

    def shown_snapshot(self: RanktopApp) -> Snapshot:
        """The snapshot the cluster screen shows (a live poll's, a past moment's, a paused
        one's), without its maps' levels: a bundle keeps values, not a screen's cells."""
        return replace(self.cluster.shown, levels={})

    @work(group="bundle", exit_on_error=False, description="write a bundle")
    async def write_bundle(self: RanktopApp, snapshot: Snapshot, screen: Screen) -> None:
        try:
            path = await make_bundle(self.engine, self.settings, snapshot, self.cluster.cursor,
                                     screen)
        except Exception as error:  # a full disk, a folder not ours: said, nothing lost
            said = " ".join(str(error).split()) or type(error).__name__
            self.notify(f"the bundle could not be written: {said}", title="bundle",
                        severity="error", timeout=15, markup=False)
        else:
            self.notify(f"bundle written: {path}\n{sharing(path)}", title="bundle", timeout=20,
                        markup=False)
        finally:
            self.bundle_writing = False


def shown_text(app: RanktopApp) -> str:
    """What the terminal shows, one line per row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())

"""``[bundle]``: where the bundle key and `ranktop report --bundle` write an incident's
bundle, and whether as a folder or as one ``.tar.gz``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .reader import Reader

FORMATS = ("folder", "tar.gz")
# Who may read a bundle: its owner only (it holds the job's log lines), the owner's group
# too, or everyone on the machine.
SHARING = ("owner", "group", "everyone")


@dataclass(frozen=True)
class BundleSettings:
    folder: Path | None = None  # None: the current directory
    format: str = "folder"
    mode: str = "owner"  # who may read a bundle written: one of SHARING

    @property
    def packed(self) -> bool:
        return self.format == "tar.gz"


def bundle_settings(reader: Reader) -> BundleSettings:
    """Read ``[bundle]``; a bad value is a ConfigError naming the key and why."""
    folder = reader.optional_text("folder")
    kind = reader.optional_text("format") or "folder"
    if kind not in FORMATS:
        raise reader.fail("format", f'must be "folder" or "tar.gz" (got {kind!r})')
    mode = reader.optional_text("mode") or "owner"
    if mode not in SHARING:
        raise reader.fail("mode", f"must be one of {', '.join(map(repr, SHARING))} "
                                  f"(got {mode!r})")
    return BundleSettings(Path(folder).expanduser() if folder else None, kind, mode)

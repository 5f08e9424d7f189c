"""Where ranktop finds its shipped configuration and the user's files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_SOURCE_CONFIG = Path(__file__).resolve().parent.parent / "config"
_INSTALLED_CONFIG = Path(sys.prefix) / "share" / "ranktop" / "config"


def shipped_config_dir() -> Path:
    """The folder holding default.toml and scenario.toml.

    A source checkout (and an editable install) reads ``config/`` beside the package;
    a wheel install reads the copy placed under ``<prefix>/share/ranktop/config``.
    """
    if (_SOURCE_CONFIG / "default.toml").is_file():
        return _SOURCE_CONFIG
    return _INSTALLED_CONFIG


def user_config_file() -> Path:
    """The user's config file at the XDG config path."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ranktop" / "config.toml"

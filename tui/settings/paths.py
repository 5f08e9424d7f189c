"""Where ranktop finds its shipped configuration and the user's files."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

SHIPPED_PACKAGE = "ranktop.config"


def version() -> str:
    """ranktop's installed version ("unknown" when run from an uninstalled tree)."""
    # Read only when asked: importlib.metadata costs every launch ~25 ms of CPU otherwise.
    from importlib import metadata

    try:
        return metadata.version("ranktop")
    except metadata.PackageNotFoundError:
        return "unknown"


def shipped_config_dir() -> Path:
    """The folder holding default.toml, scenario.toml, examples/ and prometheus/.

    Found through the package, so a source checkout, an editable install, a venv, pipx,
    ``uv tool`` and ``pip install --user`` all read the files that shipped with the code.
    """
    return Path(str(files(SHIPPED_PACKAGE)))


def user_config_file() -> Path:
    """The user's config file at the XDG config path."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ranktop" / "config.toml"

"""`ranktop check-config --toml`: the whole configuration ranktop would use, as one TOML
file that ``ranktop --config FILE`` reads as it is.

It is the shipped defaults, the user's file, the ``RANKTOP_*`` variables and the flags,
merged as the console merges them (``settings.config.resolve``), and written by the one
TOML writer (``settings.writer``). Secrets are never in a config file: a token or password
stays in the file (or variable) it came from, and a user and password given in
Prometheus's URL are left out of the URL written, said in a comment above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..settings.config import resolve
from ..settings.paths import shipped_config_dir
from ..settings.reader import merge
from ..settings.writer import toml_text

# check-config's pointer to this, among its closing lines
USE = ("the whole configuration as one file: `ranktop check-config --toml > FILE` "
       "(same flags), then `ranktop --config FILE`")
URL_CREDENTIALS = ("# The user and password in the Prometheus URL given are not written here: "
                   "put them in\n# [prometheus] username and a password_file (or "
                   "RANKTOP_USERNAME and RANKTOP_PASSWORD).\n")


def whole_config(config_file: Path | None, overrides: Mapping[str, Any],
                 environ: Mapping[str, str]) -> str:
    """The merged configuration as a TOML file, a comment saying where it came from first."""
    resolved = resolve(config_file, overrides, environ)
    table, warning = _without_url_credentials(resolved.table)
    sources = [str(shipped_config_dir() / "default.toml")]
    if resolved.user_file is not None:
        sources.append(str(resolved.user_file))
    variables = sorted({where.removeprefix("environment variable ")
                        for where in resolved.provenance.values()})
    if variables:
        sources.append(f"{', '.join(variables)} (environment)")
    if overrides:
        sources.append("the flags given")
    header = ("# ranktop's whole configuration, every key (defaults included), as check-config "
              "resolved it from:\n" + "".join(f"#   {source}\n" for source in sources)
              + "# `ranktop --config THIS_FILE` reads it as it is.\n")
    return header + warning + "\n" + toml_text(table)


def _without_url_credentials(table: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``table`` with Prometheus's URL less any ``user:password@``, and a comment if it had
    one."""
    url = table.get("prometheus", {}).get("url", "")
    if not isinstance(url, str) or "@" not in url:
        return table, ""
    try:
        parts = urlsplit(url)
    except ValueError:
        return table, ""  # not a URL: the settings would have refused it
    if "@" not in parts.netloc:
        return table, ""
    bare = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return merge(table, {"prometheus": {"url": bare}}), URL_CREDENTIALS

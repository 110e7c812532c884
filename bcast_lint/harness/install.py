"""The pip command that adds the `[harness]` extra to this very installation of bcast-lint.

bcast-lint is not on a package index, so `pip install 'bcast-lint[harness]'` finds nothing. pip
records where each installation came from (PEP 610's `direct_url.json`): a clone or another
directory (editable or not), an archive, or a git URL. The command names that same place, so it
works from wherever the user stands. Standard library only: `verify --help` and the
missing-extra message run where the extra is not installed.
"""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "bcast-lint"
EXTRA = "harness"


def install_command(extra: str = EXTRA) -> str:
    """`pip install ...` for `extra`, from where this bcast-lint was installed."""
    for origin in _origins():
        return from_direct_url(json.loads(origin), extra)
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():  # imported from a source tree that pip did not record
        return f"pip install {shlex.quote(f'{root}[{extra}]')}"
    return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"  # from a package index


def _origins() -> list[str]:
    """The PEP 610 records of every bcast-lint installation on the path. A source tree's own
    `bcast_lint.egg-info` (on the path when run from the tree) has none, so it is passed over."""
    found = []
    for distribution in metadata.distributions():
        if (distribution.metadata["Name"] or "").lower().replace("_", "-") == DISTRIBUTION:
            found.append(distribution.read_text("direct_url.json"))
    return [origin for origin in found if origin]


def from_direct_url(origin: dict, extra: str = EXTRA) -> str:
    """The command for a PEP 610 record: a directory is named by its path, anything else by
    its URL (with the commit a git install was made from)."""
    url = origin["url"]
    if "dir_info" in origin and url.startswith("file:"):
        editable = "-e " if origin["dir_info"].get("editable") else ""
        return f"pip install {editable}{shlex.quote(f'{_path(url)}[{extra}]')}"
    vcs = origin.get("vcs_info")
    if vcs is not None:
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{revision}" if revision else "")
    if origin.get("subdirectory"):
        url += f"#subdirectory={origin['subdirectory']}"
    return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}] @ {url}')}"


def _path(url: str) -> str:
    return unquote(urlparse(url).path)

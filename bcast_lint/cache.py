"""A content-addressed cache of each file's findings.

The key covers everything a result depends on: the file's bytes and path (its imports are resolved
from where it is), the tool's version and the codes enabled for that file. An entry also lists
the other modules the analysis read (the project's own functions a call reached), with their
contents' digests: it is used only while every one of them is unchanged. Entries are written to a temporary file and renamed into place, so two runs
sharing a cache never see half an entry.

A second, small index (`files.json`) maps each path linted before to its size, modification
time, content digest and the pre-filter's first verdict, so a warm run neither reads nor scans a
file whose size and time are unchanged (as ruff and git decide). A file changed so soon after it
was indexed that its time could still match is not indexed ("racy", in git's word).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Iterable, Optional

from bcast_lint import __version__
from bcast_lint.analysis.project import digest
from bcast_lint.model import FileResult, Finding

DEFAULT_DIRECTORY = ".bcast_lint_cache"
_INDEX = "files.json"
_RACY_SECONDS = 2.0  # a file modified this recently may change again within the same time stamp


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """Sizes and modification times of bcast-lint's own modules and data (the framework map): an
    edited rule or a regenerated map in a development install invalidates the cache even though
    the version did not change."""
    package = os.path.dirname(os.path.abspath(__file__))
    stamps = []
    for directory, _, names in sorted(os.walk(package)):
        for name in sorted(n for n in names if n.endswith((".py", ".json"))):
            status = os.stat(os.path.join(directory, name))
            stamps.append(f"{name}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("|".join(stamps).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Known:
    """What the index holds on a file whose size and modification time are unchanged."""

    content: str  # the digest of its bytes (Cache.content_digest)
    worth_a_look: bool  # the pre-filter's substring steps (prefilter.worth_a_look)


def _tool_stamp() -> str:
    return f"bcast-lint {__version__} {_code_fingerprint()}"


class Cache:
    def __init__(self, directory: str):
        self.directory = directory
        self._digests: dict[str, Optional[str]] = {}  # a dependency's digest, read once per run
        self._index: Optional[dict[str, list]] = None  # absolute path -> [size, mtime_ns, content, worth]
        self._index_changed = False

    @staticmethod
    def content_digest(source: bytes) -> str:
        return hashlib.sha256(source).hexdigest()

    @staticmethod
    def key(source: bytes, enabled_codes: Iterable[str], path: str = "") -> str:
        return Cache.key_of(Cache.content_digest(source), enabled_codes, path)

    @staticmethod
    def key_of(content: str, enabled_codes: Iterable[str], path: str = "") -> str:
        """The entry's key from the digest of the file's bytes (`content_digest`)."""
        digest = hashlib.sha256()
        digest.update(f"{_tool_stamp()}\0".encode())
        digest.update(f"{','.join(sorted(enabled_codes))}\0".encode())
        digest.update(f"{os.path.abspath(path) if path else ''}\0".encode("utf-8", "surrogatepass"))
        digest.update(content.encode())
        return digest.hexdigest()

    def known(self, path: str) -> Optional[Known]:
        """The index's entry for `path` when the file's size and time still match it."""
        entry = self._loaded_index().get(os.path.abspath(path))
        if entry is None:
            return None
        try:
            status = os.stat(path)
        except OSError:
            return None
        if [status.st_size, status.st_mtime_ns] != entry[:2]:
            return None
        return Known(entry[2], entry[3])

    def remember(self, path: str, status: os.stat_result, source: bytes, worth_a_look: bool) -> None:
        """Index the file read with `status` (taken before it was read): a later change moves its
        time, and the entry no longer matches."""
        if time.time() - status.st_mtime_ns / 1e9 < _RACY_SECONDS:
            return
        entry = [status.st_size, status.st_mtime_ns, self.content_digest(source), worth_a_look]
        index = self._loaded_index()
        if index.get(os.path.abspath(path)) != entry:
            index[os.path.abspath(path)] = entry
            self._index_changed = True

    def save_index(self) -> None:
        """Best effort, like `put`."""
        if not self._index_changed:
            return
        payload = {"tool": _tool_stamp(), "files": self._index}
        try:
            self._write(os.path.join(self.directory, _INDEX), payload)
            self._index_changed = False
        except OSError:
            pass

    def _loaded_index(self) -> dict[str, list]:
        if self._index is None:
            try:
                with open(os.path.join(self.directory, _INDEX), encoding="utf-8") as handle:
                    data = json.load(handle)
                self._index = data["files"] if data.get("tool") == _tool_stamp() else {}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self._index = {}
        return self._index

    def _unchanged(self, dependencies) -> bool:
        for path, expected in dependencies:
            if path not in self._digests:
                try:
                    with open(path, "rb") as handle:
                        self._digests[path] = digest(handle.read())
                except OSError:
                    self._digests[path] = None
            if self._digests[path] != expected:
                return False
        return True

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], f"{key}.json")

    def get(self, key: str, filename: str) -> Optional[FileResult]:
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        dependencies = tuple(tuple(item) for item in data.get("dependencies", ()))
        if not self._unchanged(dependencies):
            return None
        findings = tuple(dataclasses.replace(Finding.from_dict(item), filename=filename)
                         for item in data["findings"])
        unresolved = tuple((line, text) for line, text in data.get("unresolved", ()))
        frameworks = tuple((name, analysed, unresolved) for name, analysed, unresolved in data.get("frameworks", ()))
        return FileResult(filename, findings, data.get("error"), data.get("analysed", 0), unresolved,
                          dependencies, frameworks)

    def put(self, key: str, result: FileResult) -> None:
        """Best effort: a cache that cannot be written only costs speed."""
        path = self._path(key)
        payload = {"findings": [f.as_dict() for f in result.findings], "error": result.error,
                   "analysed": result.analysed, "unresolved": [list(u) for u in result.unresolved],
                   "dependencies": [list(d) for d in result.dependencies],
                   "frameworks": [list(f) for f in result.frameworks]}
        try:
            self._write(path, payload)
        except OSError:
            pass

    def _write(self, path: str, payload: dict) -> None:
        """Into a temporary file renamed into place: a reader never sees half of it."""
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._ignore_in_git()
        descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        os.replace(temporary, path)

    def _ignore_in_git(self) -> None:
        marker = os.path.join(self.directory, ".gitignore")
        if not os.path.exists(marker):
            with open(marker, "w", encoding="utf-8") as handle:
                handle.write("# Created by bcast-lint\n*\n")

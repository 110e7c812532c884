"""A content-addressed cache of each file's findings.

The key covers everything a result depends on: the file's bytes and path (its imports are resolved
from where it is), the tool's version and the codes enabled for that file. An entry also lists
the other modules the analysis read (the project's own functions a call reached), with their
contents' digests: it is used only while every one of them is unchanged. Entries are written to a temporary file and renamed into place, so two runs
sharing a cache never see half an entry.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from typing import Iterable, Optional

from bcast_lint import __version__
from bcast_lint.analysis.project import digest
from bcast_lint.model import FileResult, Finding

DEFAULT_DIRECTORY = ".bcast_lint_cache"


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """Sizes and modification times of bcast-lint's own modules: an edited rule in a development
    install invalidates the cache even though the version did not change."""
    package = os.path.dirname(os.path.abspath(__file__))
    stamps = []
    for directory, _, names in sorted(os.walk(package)):
        for name in sorted(n for n in names if n.endswith(".py")):
            status = os.stat(os.path.join(directory, name))
            stamps.append(f"{name}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("|".join(stamps).encode()).hexdigest()[:16]


class Cache:
    def __init__(self, directory: str):
        self.directory = directory
        self._digests: dict[str, Optional[str]] = {}  # a dependency's digest, read once per run

    @staticmethod
    def key(source: bytes, enabled_codes: Iterable[str], path: str = "") -> str:
        digest = hashlib.sha256()
        digest.update(f"bcast-lint {__version__} {_code_fingerprint()}\0".encode())
        digest.update(f"{','.join(sorted(enabled_codes))}\0".encode())
        digest.update(f"{os.path.abspath(path) if path else ''}\0".encode("utf-8", "surrogatepass"))
        digest.update(source)
        return digest.hexdigest()

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
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self._ignore_in_git()
            descriptor, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(payload, handle)
            os.replace(temporary, path)
        except OSError:
            pass

    def _ignore_in_git(self) -> None:
        marker = os.path.join(self.directory, ".gitignore")
        if not os.path.exists(marker):
            with open(marker, "w", encoding="utf-8") as handle:
                handle.write("# Created by bcast-lint\n*\n")

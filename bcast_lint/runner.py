"""Lint many files: read, pre-filter and consult the cache in this process, and parse only what is
left, in worker processes when there is enough of it to pay for them."""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from bcast_lint.codes import ALL_CODES
from bcast_lint.config import Settings
from bcast_lint.engine import RARE_COLLECTION_THRESHOLDS, lint_source, rare_garbage_collection
from bcast_lint.model import FileResult
from bcast_lint.prefilter import may_have_findings

if TYPE_CHECKING:
    from bcast_lint.cache import Cache

_MIN_FILES_PER_WORKER = 4  # below this, starting workers (and importing libcst in each) costs more


STDIN = "-"


@dataclass(frozen=True)
class Task:
    filename: str  # what to report
    source: bytes


def read_source(path: str) -> bytes:
    """The file's bytes ("-" reads stdin); raises OSError."""
    if path == STDIN:
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


def lint_files(files: Sequence[tuple[str, str]], settings: Settings, jobs: Optional[int],
               cache: Optional[Cache]) -> list[FileResult]:
    """One FileResult per (path, filename to report), in order.

    Only the sources that pass the pre-filter and miss the cache are kept in memory.
    """
    results: dict[int, FileResult] = {}
    pending: list[tuple[int, str, Task]] = []  # index, cache key, task
    for index, (path, filename) in enumerate(files):
        try:
            source = read_source(path)
        except OSError as error:
            results[index] = FileResult(filename, error=f"cannot read: {error.strerror or error}")
            continue
        if not may_have_findings(source):
            results[index] = FileResult(filename)
            continue
        key = cache.key(source, _enabled_codes(settings, filename)) if cache else ""
        cached = cache.get(key, filename) if cache else None
        if cached is not None:
            results[index] = cached
        else:
            pending.append((index, key, Task(filename, source)))
    with rare_garbage_collection():
        linted = _lint_all([task for _, _, task in pending], settings, jobs or os.cpu_count() or 1)
    for (index, key, _), result in zip(pending, linted):
        results[index] = result
        if cache is not None and result.error is None:
            cache.put(key, result)
    return [results[index] for index in range(len(files))]


def _enabled_codes(settings: Settings, filename: str) -> list[str]:
    return [code for code in ALL_CODES if settings.is_enabled(code, filename)]


def _lint_all(tasks: list[Task], settings: Settings, jobs: int) -> list[FileResult]:
    workers = min(jobs, len(tasks) // _MIN_FILES_PER_WORKER)
    if workers <= 1:
        return [_lint_one(task, settings) for task in tasks]
    from concurrent.futures import ProcessPoolExecutor  # 15 ms to import: only when needed

    with ProcessPoolExecutor(max_workers=workers, initializer=gc.set_threshold,
                             initargs=RARE_COLLECTION_THRESHOLDS) as pool:
        chunk = max(1, len(tasks) // (workers * 8))
        return list(pool.map(_lint_one, tasks, [settings] * len(tasks), chunksize=chunk))


def _lint_one(task: Task, settings: Settings) -> FileResult:
    return lint_source(task.source, task.filename,
                       lambda code: settings.is_enabled(code, task.filename))

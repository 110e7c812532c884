"""Lint, fix, diff or add noqa to many files: read, pre-filter and consult the cache in this process,
and run the per-file pipeline on what is left, in worker processes when there is enough of it to
pay for them. Nothing here writes a file: the CLI writes what the outcomes say."""

from __future__ import annotations

import dataclasses
import functools
import gc
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from bcast_lint import fixer
from bcast_lint.analysis.project import Project
from bcast_lint.config import Settings
from bcast_lint.engine import RARE_COLLECTION_THRESHOLDS, rare_garbage_collection, worth_parsing
from bcast_lint.fixer import applicable
from bcast_lint.model import FileResult, Finding
from bcast_lint.noqa import noqa_edits
from bcast_lint.prefilter import worth_a_look
from bcast_lint.source import Source

if TYPE_CHECKING:
    from bcast_lint.cache import Cache

_MIN_FILES_PER_WORKER = 4  # below this, starting workers (and importing libcst in each) costs more


STDIN = "-"


@dataclass(frozen=True)
class Task:
    filename: str  # what to report
    source: bytes
    from_stdin: bool = False


def read_source(path: str) -> bytes:
    """The file's bytes ("-" reads stdin); raises OSError."""
    if path == STDIN:
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


# What a run does to each file: report its findings, fix it, show what --fix would change, or
# add noqa comments.
LINT, FIX, DIFF, ADD_NOQA = "lint", "fix", "diff", "add-noqa"


@dataclass(frozen=True)
class FileOutcome:
    result: FileResult  # the findings the file holds once the mode is done (FIX: what remains)
    fixed: tuple[Finding, ...] = ()  # FIX and DIFF: the findings whose fixes were applied
    new: Optional[bytes] = None  # the contents the mode would write, when they differ
    original: Optional[bytes] = None  # the contents read, when `new` is set or they came from stdin
    before: Optional[FileResult] = None  # FIX and DIFF, when `new` is set: the findings of `original`
    noqa_added: int = 0  # ADD_NOQA: the lines `new` gives a noqa comment


def process_files(files: Sequence[tuple[str, str]], settings: Settings, mode: str, jobs: Optional[int],
                  cache: Optional[Cache]) -> list[FileOutcome]:
    """One FileOutcome per (path, filename to report), in order; nothing is written.

    Only the sources that pass the pre-filter and need more than the cache holds are kept in memory.
    The run's Project (module index and summaries) is made here and lives as long as the run.
    """
    project = Project()
    outcomes: dict[int, FileOutcome] = {}
    pending: list[tuple[int, str, Task]] = []  # index, cache key, task
    for index, (path, filename) in enumerate(files):
        indexed = cache is not None and path != STDIN
        if indexed and (decided := _decided_by_index(cache, path, filename, settings, mode)) is not None:
            outcomes[index] = decided
            continue
        try:
            status = os.stat(path) if indexed else None
            source = read_source(path)
        except OSError as error:
            outcomes[index] = FileOutcome(FileResult(filename, error=f"cannot read: {error.strerror or error}"))
            continue
        if status is not None:
            cache.remember(path, status, source, worth_a_look(source))
        decided, key = _decided_early(source, path, filename, settings, mode, cache, project)
        if decided is not None:
            outcomes[index] = decided
        else:
            pending.append((index, key, Task(filename, source, path == STDIN)))
    with rare_garbage_collection():
        processed = _process_all([task for _, _, task in pending], settings, mode, jobs or os.cpu_count() or 1,
                                 project)
    for (index, key, task), outcome in zip(pending, processed):
        if outcome.new is not None or task.from_stdin:
            outcome = dataclasses.replace(outcome, original=task.source)
        outcomes[index] = outcome
        linted = outcome.before or outcome.result  # what a plain lint of these bytes gives
        if cache is not None and linted.error is None:
            cache.put(key, linted)
    if cache is not None:
        cache.save_index()
    return [outcomes[index] for index in range(len(files))]


def _decided_early(source: bytes, path: str, filename: str, settings: Settings, mode: str,
                   cache: Optional[Cache], project: Project) -> tuple[Optional[FileOutcome], str]:
    """The outcome when the pre-filter or the cache decides it (else None), and the cache key.
    The substring steps of the pre-filter come first: they reject most files for less than a
    cache lookup costs."""
    echoed = source if path == STDIN else None  # `--fix -` writes the source back to stdout
    if not worth_a_look(source):
        return FileOutcome(FileResult(filename), original=echoed), ""
    key = cache.key(source, settings.enabled_codes(filename), path) if cache else ""
    cached = cache.get(key, filename) if cache else None
    if cached is not None and not _needs_more(cached, mode, settings):
        return FileOutcome(cached, original=echoed), key
    read: set[str] = set()
    if worth_parsing(source, filename if path == STDIN else path, project, read):
        return None, key
    if cache is not None:  # the pre-filter's verdict, valid while the modules it read are unchanged
        cache.put(key, FileResult(filename, dependencies=_digests(project, read)))
    return FileOutcome(FileResult(filename), original=echoed), key


def _decided_by_index(cache: Cache, path: str, filename: str, settings: Settings,
                      mode: str) -> Optional[FileOutcome]:
    """The outcome of an unchanged file the cache's index decides without reading it: one the
    pre-filter's substring steps rejected, or one with a usable cached result."""
    known = cache.known(path)
    if known is None:
        return None
    if not known.worth_a_look:
        return FileOutcome(FileResult(filename))
    cached = cache.get(cache.key_of(known.content, settings.enabled_codes(filename), path), filename)
    if cached is None or _needs_more(cached, mode, settings):
        return None
    return FileOutcome(cached)


def _digests(project: Project, paths: set[str]) -> tuple[tuple[str, Optional[str]], ...]:
    return tuple((path, project.digest_of(path)) for path in sorted(paths))


def _needs_more(cached: FileResult, mode: str, settings: Settings) -> bool:
    """Whether the mode has work the cached findings cannot do: fixes to apply, noqa to add."""
    if mode in (FIX, DIFF):
        return any(applicable(finding, settings.unsafe_fixes) for finding in cached.findings)
    return mode == ADD_NOQA and bool(cached.findings)


def _process_all(tasks: list[Task], settings: Settings, mode: str, jobs: int,
                 project: Project) -> list[FileOutcome]:
    workers = min(jobs, len(tasks) // _MIN_FILES_PER_WORKER)
    if workers <= 1:
        return [process(task, settings, mode, project) for task in tasks]
    from multiprocessing import Pool  # only when needed: workers cost more than their import

    # Leaving the block terminates the workers, so Ctrl-C stops them at once instead of waiting
    # for their current chunk (concurrent.futures would wait).
    with Pool(workers, initializer=_start_worker) as pool:
        chunk = max(1, len(tasks) // (workers * 8))
        return pool.map(functools.partial(_process_in_worker, settings=settings, mode=mode), tasks, chunksize=chunk)


def _start_worker() -> None:
    import signal

    # Ctrl-C reaches the whole process group: the parent handles it and ends the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.set_threshold(*RARE_COLLECTION_THRESHOLDS)


def _process_in_worker(task: Task, settings: Settings, mode: str) -> FileOutcome:
    return process(task, settings, mode, _worker_project(settings))


@functools.lru_cache(maxsize=1)
def _worker_project(settings: Settings) -> Project:
    """A worker's Project, shared by every file of the run it serves: a module imported by many
    files is read and summarised once per worker, not once per importer. A worker serves one
    run (the pool ends with it); the key is that run's configuration."""
    return Project()


def process(task: Task, settings: Settings, mode: str, project: Project) -> FileOutcome:
    """The per-file pipeline: lint (fixes checked), then what the mode adds. A bug of the linter
    on one file is that file's error, written nowhere, and the run goes on with the others."""
    try:
        return _process(task, settings, mode, project)
    except Exception as error:  # any defect of the analysis, reported for its file alone
        return FileOutcome(FileResult(task.filename, error=f"internal error ({type(error).__name__}: {error}); "
                                                           "this is a bug in bcast-lint, please report it"))


def _process(task: Task, settings: Settings, mode: str, project: Project) -> FileOutcome:
    def enabled(code: str) -> bool:
        return settings.is_enabled(code, task.filename)

    if mode in (FIX, DIFF):
        fixed = fixer.fix_source(task.source, task.filename, enabled, settings.unsafe_fixes, project)
        new = fixed.source if fixed.source != task.source else None
        return FileOutcome(fixed.remaining, fixed.applied, new, before=fixed.original if new else None)
    result = fixer.lint_checked(task.source, task.filename, enabled, project)
    if mode == ADD_NOQA and result.findings:
        source = Source.from_bytes(task.source)
        edits = noqa_edits(source, result.findings)
        new = source.apply(edits)
        return FileOutcome(result, new=new if new != task.source else None, noqa_added=len(edits))
    return FileOutcome(result)

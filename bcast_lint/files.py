"""Which files a run lints: named files as given, directories walked for Python sources.

Directories are walked a level at a time so that each level asks git about all of its entries in
one `git check-ignore` call per repository, and ignored or excluded directories are never entered.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bcast_lint.config import Settings

STDIN = "-"
NOT_A_REGULAR_FILE = "not a regular file"
PYTHON_SUFFIXES = (".py", ".pyi")

# We point git at each repository with -C; these variables, set inside git hooks, would override it.
_GIT_LOCATION_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")

_ERROR_MESSAGES = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ELOOP: "symbolic link loop",
    errno.ENOTDIR: "not a directory",
}


@dataclass(frozen=True)
class SourceFile:
    path: str
    error: str | None = None  # why the path cannot be used; such a file is not linted


@dataclass(frozen=True)
class _Entry:
    """A path met during a walk, with where git would find it."""

    path: str
    is_dir: bool
    repo: str | None  # the git work tree holding it; None outside git or when gitignore is off
    rel: str  # its POSIX path inside `repo`


def discover(paths: Sequence[str], settings: Settings) -> Iterator[SourceFile]:
    """The files to lint for `paths`, each once, sorted by path; stdin ("-") passes through."""
    found: dict[str, SourceFile] = {}
    for argument in paths:
        for source in _from_argument(argument, settings):
            found.setdefault(source.path, source)
    return iter(sorted(found.values(), key=lambda source: source.path))


def _from_argument(argument: str, settings: Settings) -> Iterator[SourceFile]:
    if argument == STDIN:
        yield SourceFile(STDIN)
        return
    path = os.path.normpath(argument)
    if settings.is_force_excluded(path):
        return
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        yield SourceFile(path, _describe(exc))
        return
    # A named file is linted whatever its suffix, and whatever the excludes say unless
    # force-exclude is on. Anything else (a FIFO, a socket, a device) is an error for that path:
    # reading a FIFO nobody writes to would wait forever.
    if stat.S_ISDIR(mode):
        yield from _walk(path, settings)
    elif stat.S_ISREG(mode):
        yield SourceFile(path)
    else:
        yield SourceFile(path, NOT_A_REGULAR_FILE)


def _walk(top: str, settings: Settings) -> Iterator[SourceFile]:
    visited = {os.path.realpath(top)}
    repo, rel = _judged_location(top) if settings.respect_gitignore else (None, "")
    level = [_Entry(top, True, repo, rel)]
    while level:
        children: list[_Entry] = []
        for directory in level:
            entries, errors = _children(directory, settings, visited)
            children.extend(entries)
            yield from errors
        children = _drop_gitignored(children)
        yield from (SourceFile(entry.path) for entry in children if not entry.is_dir)
        level = [entry for entry in children if entry.is_dir]


def _children(
    directory: _Entry, settings: Settings, visited: set[str]
) -> tuple[list[_Entry], list[SourceFile]]:
    """The Python files and subdirectories to consider in `directory`, and the errors met there."""
    try:
        with os.scandir(directory.path) as scan:
            items = sorted(scan, key=lambda item: item.name)
    except OSError as exc:
        return [], [SourceFile(directory.path, _describe(exc))]
    repo, base = _children_location(directory, [item.name for item in items], settings)
    entries, errors = [], []
    for item in items:
        path = item.name if directory.path == os.curdir else os.path.join(directory.path, item.name)
        if settings.is_excluded(path):
            continue
        rel = f"{base}/{item.name}" if base else item.name
        found = _child(item, path, repo, rel, visited)
        if isinstance(found, SourceFile):
            errors.append(found)
        elif found is not None:
            entries.append(found)
    return entries, errors


def _child(
    item: os.DirEntry, path: str, repo: str | None, rel: str, visited: set[str]
) -> _Entry | SourceFile | None:
    """What one directory entry adds: a directory or source to keep, an error, or nothing."""
    try:
        is_dir, is_file = item.is_dir(), item.is_file()
    except OSError:
        is_dir = is_file = False  # a symlink loop: reported below when it looks like a source
    if is_dir:
        return _Entry(path, True, repo, rel) if _first_visit(path, visited) else None
    if not item.name.endswith(PYTHON_SUFFIXES):
        return None
    if is_file:
        return _Entry(path, False, repo, rel)
    return SourceFile(path, _link_error(path)) if item.is_symlink() else None


def _children_location(
    directory: _Entry, names: list[str], settings: Settings
) -> tuple[str | None, str]:
    """The repository, and the path inside it, that `directory`'s children are judged by."""
    if not settings.respect_gitignore:
        return None, ""
    if ".git" in names:
        return directory.path, ""
    # Git refuses paths that run through a symlink, so judge a linked directory where it lives.
    if os.path.islink(directory.path):
        return _judged_location(directory.path)
    return directory.repo, directory.rel


def _first_visit(path: str, visited: set[str]) -> bool:
    """False for a directory already walked: a symlink loop, or a second link to the same place."""
    real = os.path.realpath(path)
    if real in visited:
        return False
    visited.add(real)
    return True


def _link_error(path: str) -> str:
    try:
        os.stat(path)
    except OSError as exc:
        return "broken symbolic link" if exc.errno == errno.ENOENT else _describe(exc)
    return NOT_A_REGULAR_FILE


def _describe(exc: OSError) -> str:
    return _ERROR_MESSAGES.get(exc.errno, exc.strerror or str(exc))


def _judged_location(path: str) -> tuple[str | None, str]:
    """Where git judges the paths below `path`: nowhere when git ignores `path` itself.

    We only start from a path the user named (or a link we followed), which is linted even when
    ignored, and git would call everything below an ignored directory ignored as well.
    """
    repo, rel = _locate(path)
    if repo is not None and rel and _git_ignored(repo, [rel]):
        return None, ""
    return repo, rel


def _locate(path: str) -> tuple[str | None, str]:
    """The git work tree holding `path` (found by its `.git`), and `path` inside it."""
    real = os.path.realpath(path)
    probe = real
    while not os.path.exists(os.path.join(probe, ".git")):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None, ""
        probe = parent
    rel = os.path.relpath(real, probe)
    return probe, "" if rel == os.curdir else rel.replace(os.sep, "/")


def _drop_gitignored(entries: list[_Entry]) -> list[_Entry]:
    by_repo: dict[str, list[str]] = {}
    for entry in entries:
        if entry.repo is not None:
            by_repo.setdefault(entry.repo, []).append(entry.rel)
    ignored = {(repo, rel) for repo, rels in by_repo.items() for rel in _git_ignored(repo, rels)}
    return [entry for entry in entries if (entry.repo, entry.rel) not in ignored]


def _git_ignored(repo: str, rels: list[str]) -> set[str]:
    """Which of `rels` git ignores in `repo`; none when git is missing or cannot tell."""
    import subprocess  # only walks need it; runs on named files should not pay for the import

    env = {key: value for key, value in os.environ.items() if key not in _GIT_LOCATION_VARIABLES}
    command = ["git", "-C", repo, "check-ignore", "--stdin", "-z"]
    query = b"\0".join(os.fsencode(rel) for rel in rels) + b"\0"
    try:
        done = subprocess.run(command, input=query, capture_output=True, env=env, check=False)
    except OSError:
        return set()
    # 1 means nothing is ignored; anything else (not a repository, dubious ownership) means git
    # could not judge, and linting a file too many beats silently skipping one.
    if done.returncode != 0:
        return set()
    return {os.fsdecode(name) for name in done.stdout.split(b"\0") if name}

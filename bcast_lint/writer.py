"""Writing fixed files without ever leaving a damaged one behind.

The new contents go to a temporary file in the same directory, which then atomically replaces
the original: a crash at any moment leaves either the old file or the new one. A file that
changed since it was read is left alone, and its permissions are kept.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile


class WriteError(Exception):
    pass


def write_if_unchanged(path: str, original: bytes, new: bytes) -> None:
    path = os.path.realpath(path)  # replace a symlink's target, not the link
    try:
        with open(path, "rb") as handle:
            current = handle.read()
            mode = os.fstat(handle.fileno()).st_mode
    except OSError as error:
        raise WriteError(f"not fixed: cannot re-read the file: {error.strerror or error}") from error
    if current != original:
        raise WriteError("not fixed: the file changed while it was being linted")
    if _read_only(path, mode):
        raise WriteError("not fixed: the file is read-only")
    _replace_atomically(path, new)


def _read_only(path: str, mode: int) -> bool:
    # root passes os.access whatever the mode, and the rename below needs only the directory to
    # be writable: a file nobody may write (chmod a-w) is the owner's explicit "leave this alone".
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK)


def _replace_atomically(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=".bcast-lint-", suffix=".tmp", dir=directory)
    except OSError as error:
        raise WriteError(f"not fixed: cannot create a temporary file: {error.strerror or error}") from error
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException as error:  # Ctrl-C too: never leave the half-written temporary behind
        _remove_quietly(temporary)
        if isinstance(error, OSError):
            raise WriteError(f"not fixed: cannot write the file: {error.strerror or error}") from error
        raise


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

"""Cut out the functions and classes that cannot hold a finding, before LibCST sees the file.

LibCST's parser and visitors cost far more than CPython's `ast`, and in a large module the
broadcast usually sits in one function of hundreds. `ast` finds the top-level statements (and
the methods of top-level classes) whose text names no collective; each is replaced by a one-line
stub and its other lines are dropped. Every kept line keeps its text and columns, and
`Reduced.line_numbers` maps it back to its number in the original file, so findings, fixes and
noqa comments refer to the original. Imports and other module-level statements are always kept:
they decide what names mean.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterable, Optional

from bcast_lint.analysis.apis import CALL_WORDS

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CALL_WORDS = {word.encode() for word in CALL_WORDS}
_ALIAS = re.compile(rb"\b(?:" + b"|".join(map(re.escape, sorted(_CALL_WORDS))) + rb")\s+as\s+([^\s,;()\\#]+)")


@dataclass(frozen=True)
class Reduced:
    source: bytes
    line_numbers: tuple[int, ...]  # the original 1-based number of each line of `source`


def reduce_source(source: bytes, tree: ast.Module) -> Reduced:
    """`source` without its irrelevant functions and classes; `tree` is CPython's parse of it."""
    lines: list[Optional[bytes]] = source.splitlines(keepends=True)  # on \n, \r\n and \r, as the tokenizer
    calling = _lines_with_calls(lines, _CALL_WORDS | _aliases(source))
    for statement in tree.body:
        if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)) and not _mentions(statement, calling):
            _cut(lines, statement)
        elif isinstance(statement, ast.ClassDef):
            for member in statement.body:
                if (isinstance(member, _FUNCTIONS) and _first_line(member) > statement.lineno
                        and not _mentions(member, calling)):
                    _cut(lines, member)
    kept = [(number, line) for number, line in enumerate(lines, start=1) if line is not None]
    return Reduced(b"".join(line for _, line in kept), tuple(number for number, _ in kept))


def _lines_with_calls(lines: list[bytes], words: Iterable[bytes]) -> set[int]:
    """1-based numbers of the lines where one of `words` is called: `broadcast(`, `.gather (`."""
    # Not \b: an alias may start with a non-ASCII byte, which \b does not see as a word.
    pattern = re.compile(rb"(?<![\w\x80-\xff])(?:" + b"|".join(map(re.escape, sorted(words))) + rb")\s*\(")
    return {number for number, line in enumerate(lines, start=1) if pattern.search(line)}


def _aliases(source: bytes) -> set[bytes]:
    """`bc` in `from accelerate.utils import broadcast as bc`. Read from the bytes, which is much
    faster than walking the tree; a match in a string or comment only keeps more code."""
    return set(_ALIAS.findall(source))


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _mentions(node: ast.stmt, calling: set[int]) -> bool:
    """Whether a collective is called within the node's lines (or the node must be kept)."""
    if not node.name.isascii():
        return True  # the stub must be written in the file's own encoding: keep it whole
    return any(_first_line(node) <= number <= node.end_lineno for number in calling)


def _cut(lines: list[Optional[bytes]], node: ast.stmt) -> None:
    """Replace the node's first line with a stub and drop (None) its other lines: the name stays
    bound (a module's own `len` is not the builtin), and a class body stays non-empty."""
    first = _first_line(node) - 1
    line = lines[first]
    indent = re.match(rb"[ \t]*", line).group()  # spaces or tabs, as the file has them
    keyword = b"class" if isinstance(node, ast.ClassDef) else b"def"
    signature = b"" if keyword == b"class" else b"()"
    ending = line[len(line.rstrip(b"\r\n")):]
    lines[first] = indent + keyword + b" " + node.name.encode() + signature + b": pass" + ending
    for index in range(first + 1, node.end_lineno):
        lines[index] = None

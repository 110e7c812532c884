"""Blank out the functions and classes that cannot hold a finding, before LibCST sees the file.

LibCST's parser and visitors cost far more than CPython's `ast`, and in a large module the
broadcast usually sits in one function of hundreds. `ast` finds the top-level statements (and
the methods of top-level classes) whose text names no collective; their lines are emptied but
for a one-line stub, so every remaining line keeps its number and columns and findings, fixes and noqa comments refer
to the original file. Imports and other module-level statements are always kept: they decide
what names mean.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable

from bcast_lint.analysis.apis import CALL_WORDS

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def reduce_source(source: bytes, tree: ast.Module) -> bytes:
    """`source` with irrelevant functions and classes blanked; `tree` is CPython's parse of it."""
    lines = source.splitlines(keepends=True)  # bytes split on \n, \r\n and \r, as the tokenizer does
    calling = _lines_with_calls(lines, CALL_WORDS | _aliases(tree))
    for statement in tree.body:
        if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)) and not _mentions(statement, calling):
            _blank(lines, statement)
        elif isinstance(statement, ast.ClassDef):
            for member in statement.body:
                if (isinstance(member, _FUNCTIONS) and _first_line(member) > statement.lineno
                        and not _mentions(member, calling)):
                    _blank(lines, member)
    return b"".join(lines)


def _lines_with_calls(lines: list[bytes], words: Iterable[str]) -> set[int]:
    """1-based numbers of the lines where one of `words` is called: `broadcast(`, `.gather (`."""
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(w.encode()) for w in sorted(words)) + rb")\s*\(")
    return {number for number, line in enumerate(lines, start=1) if pattern.search(line)}


def _aliases(tree: ast.Module) -> set[str]:
    """`bc` in `from accelerate.utils import broadcast as bc`."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(alias.asname for alias in node.names
                         if alias.asname and alias.name.rsplit(".", 1)[-1] in CALL_WORDS)
    return found


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _mentions(node: ast.stmt, calling: set[int]) -> bool:
    """Whether a collective is called within the node's lines (or the node must be kept)."""
    if not node.name.isascii():
        return True  # the stub must be written in the file's own encoding: keep it whole
    return any(_first_line(node) <= number <= node.end_lineno for number in calling)


def _blank(lines: list[bytes], node: ast.stmt) -> None:
    """Empty the node's lines, keeping their line endings, and leave a stub on the first one:
    the name stays bound (a module's own `len` is not the builtin), and a class body stays
    non-empty."""
    first = _first_line(node) - 1
    indent = re.match(rb"[ \t]*", lines[first]).group()  # spaces or tabs, as the file has them
    for index in range(first, node.end_lineno):
        line = lines[index]
        lines[index] = line[len(line.rstrip(b"\r\n")):]
    keyword = b"class" if isinstance(node, ast.ClassDef) else b"def"
    signature = b"" if keyword == b"class" else b"()"
    stub = indent + keyword + b" " + node.name.encode() + signature + b": pass"
    lines[first] = stub + lines[first]

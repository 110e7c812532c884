"""The file's text read with CPython's `ast`, for the facts a module reads from its whole text
(signal handlers, literal tables, files written on some ranks, ...): the cut may have dropped the
code they need from the tree LibCST parses."""

from __future__ import annotations

import ast
from typing import Optional


def parsed(text: str) -> Optional[ast.Module]:
    """The text's tree, or None where it does not parse (a syntax error, a null byte, nesting
    deeper than the parser's recursion allows): such a file has no fact to give."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def called_name(call: ast.Call) -> Optional[str]:
    """`save` for `torch.save(...)` and for `save(...)`; None for `f()(...)` and the like."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def top_functions(text: str, words: tuple[str, ...]) -> list:
    """The text's top-level functions, where it holds one of `words` (a test of the text spares
    the parse of a file with nothing to find), else []."""
    return [node for node in top_definitions(text, words) if not isinstance(node, ast.ClassDef)]


def top_definitions(text: str, words: tuple[str, ...]) -> list:
    """The text's top-level functions and classes, where it holds one of `words`, else []."""
    tree = parsed(text) if any(word in text for word in words) else None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [node for node in tree.body if isinstance(node, kinds)] if tree else []

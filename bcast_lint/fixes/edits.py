"""Edit builders: text edits positioned on a ModuleAnalysis's nodes."""

from __future__ import annotations

import libcst as cst

from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.model import Edit


def replace_node(analysis: ModuleAnalysis, node: cst.CSTNode, content: str) -> Edit:
    where = analysis.position(node)
    return Edit(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, content)


def insert_before_statement(analysis: ModuleAnalysis, statement: cst.CSTNode, line_text: str) -> Edit:
    """Insert `line_text` as a new line above `statement`, at its indentation."""
    where = analysis.position(statement)
    indent = analysis.line_text(where.start.line)[: where.start.column]
    return Edit(where.start.line, where.start.column + 1, where.start.line, where.start.column + 1,
                f"{line_text}\n{indent}")

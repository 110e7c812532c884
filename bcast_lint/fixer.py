"""Apply fixes to a file's text: edits as text ranges, repeated until nothing more applies.

Fixes are plain text edits (like ruff's), so several rules' fixes on one file are applied in one
pass when they do not overlap; overlapping ones wait for the next pass, after a re-lint. The
result is only ever returned if it still compiles.
"""

from __future__ import annotations

import io
import tokenize
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from bcast_lint.engine import CodeFilter, lint_source
from bcast_lint.model import SAFE, Edit, FileResult, Finding

MAX_PASSES = 10


@dataclass(frozen=True)
class FixOutcome:
    source: bytes  # the fixed file, or the original when nothing applied
    applied: tuple[Finding, ...]
    remaining: FileResult  # the findings left in the fixed file
    error: str | None = None  # why fixing stopped early (the fix would not compile)


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability == SAFE)


def fix_source(source: bytes, filename: str, enabled: CodeFilter, unsafe: bool) -> FixOutcome:
    applied: list[Finding] = []
    result = lint_source(source, filename, enabled)
    for _ in range(MAX_PASSES):
        chosen = _non_overlapping([f for f in result.findings if applicable(f, unsafe)])
        if not chosen:
            break
        candidate = _rewrite(source, [edit for finding in chosen for edit in finding.fix.edits])
        error = compile_error(candidate, filename)
        if error is not None:
            return FixOutcome(source, tuple(applied), result, f"fix would not compile: {error}")
        after = lint_source(candidate, filename, enabled)
        if not _resolves_any(chosen, result, after):
            break  # a fix that leaves its finding in place would be applied again on every pass
        source, result = candidate, after
        applied.extend(chosen)
    return FixOutcome(source, tuple(applied), result)


def _resolves_any(chosen: Sequence[Finding], before: FileResult, after: FileResult) -> bool:
    """Whether, for some fixed finding, fewer findings like it (same code and message) remain."""
    counts_before = Counter((f.code, f.message) for f in before.findings)
    counts_after = Counter((f.code, f.message) for f in after.findings)
    return any(counts_after[key] < counts_before[key] for key in {(f.code, f.message) for f in chosen})


def compile_error(source: bytes, filename: str) -> str | None:
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return str(error)
    return None


def _non_overlapping(findings: Sequence[Finding]) -> list[Finding]:
    chosen: list[Finding] = []
    taken: list[tuple] = []
    for finding in sorted(findings, key=lambda f: _span(f.fix.edits)):
        span = _span(finding.fix.edits)
        if all(span[1] <= other[0] or other[1] <= span[0] for other in taken):
            chosen.append(finding)
            taken.append(span)
    return chosen


def _span(edits: Sequence[Edit]) -> tuple:
    start = min((edit.line, edit.column) for edit in edits)
    end = max((edit.end_line, edit.end_column) for edit in edits)
    return (start, end)


def _rewrite(source: bytes, edits: Sequence[Edit]) -> bytes:
    """Apply `edits` to `source`, keeping its encoding, BOM and line endings."""
    # Python's own detection: a coding cookie, or "utf-8-sig", which strips and restores a BOM.
    encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    text = source.decode(encoding)
    lines = text.splitlines(keepends=True)
    newline = _newline(lines)
    offsets = _line_offsets(lines)
    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        start = offsets[edit.line - 1] + edit.column - 1
        end = offsets[edit.end_line - 1] + edit.end_column - 1
        text = text[:start] + edit.content.replace("\n", newline) + text[end:]
    return text.encode(encoding)


def _newline(lines: Sequence[str]) -> str:
    for line in lines:
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith(("\n", "\r")):
            return line[-1]
    return "\n"


def _line_offsets(lines: Sequence[str]) -> list[int]:
    offsets, total = [], 0
    for line in lines:
        offsets.append(total)
        total += len(line)
    offsets.append(total)  # an edit may start at the end of the file
    return offsets


"""Check fixes before they are offered, and apply them: edits over the file's `Source`, repeated
until nothing more applies.

A fix is offered only if the fixer would apply it: applied to the file, the result must encode,
compile, no longer hold the fix's finding and hold no finding the file did not have. A fix that
fails is dropped from its finding, which keeps the reason (`Finding.fix_rejected`) for
`--show-fixes`: no report says "fixable" of a fix that `--fix` then does not apply. The one
exception is a plain lint of a file over RELINT_CHECK_LINES lines (linted in parts): its fixes are
checked to encode and compile, not linted again, since the second lint doubled its time; `--fix`
checks them all.

Fixes are plain text edits (like ruff's), so several rules' fixes on one file are applied in one
pass when they do not overlap; overlapping ones wait for the next pass, after a re-lint.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from bcast_lint.engine import CodeFilter, lint_source
from bcast_lint.model import SAFE, Edit, FileResult, Finding
from bcast_lint.parts import PART_LINES
from bcast_lint.source import Source

MAX_PASSES = 10


@dataclass(frozen=True)
class FixOutcome:
    source: bytes  # the fixed file, or the original when nothing applied
    applied: tuple[Finding, ...]
    remaining: FileResult  # the findings left in the fixed file, their fixes checked
    original: FileResult  # the findings of the original file, their fixes checked


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability == SAFE)


# From the size at which a module's cut text may be linted in parts (bcast_lint.parts), a plain
# lint checks that the fixes compile, not that a second lint finds them gone: that second lint
# doubled the time of a generated module of 20,000 functions. `--fix` (fix_source) still checks
# every fix it applies.
RELINT_CHECK_LINES = PART_LINES


def lint_checked(data: bytes, filename: str, enabled: CodeFilter, project=None) -> FileResult:
    """The file's findings, with every fix the fixer would reject dropped. `project`: the run's
    analysis.project.Project (see engine.lint_source)."""
    fixer = _Fixer(filename, enabled, project)
    return fixer.checked(data, fixer.lint(data), relint=data.count(b"\n") <= RELINT_CHECK_LINES)


def fix_source(data: bytes, filename: str, enabled: CodeFilter, unsafe: bool, project=None) -> FixOutcome:
    fixer = _Fixer(filename, enabled, project)
    original = result = fixer.checked(data, fixer.lint(data))
    applied: list[Finding] = []
    for _ in range(MAX_PASSES):
        chosen = _non_overlapping([f for f in result.findings if applicable(f, unsafe)])
        attempt, result = fixer.apply_some(data, result, chosen)
        if attempt is None:
            break
        data, result = attempt.data, fixer.checked(attempt.data, attempt.after)
        applied.extend(attempt.chosen)
    return FixOutcome(data, tuple(applied), result, original)


@dataclass(frozen=True)
class _Attempt:
    chosen: tuple[Finding, ...]
    data: bytes = b""  # the file with the chosen fixes applied, when they are accepted
    after: Optional[FileResult] = None  # its findings
    rejected: Optional[str] = None  # why the fixes are not accepted


class _Fixer:
    """Tries fixes on one file, remembering each attempt (checking the fixes and then applying
    the same ones re-lints the file once, not twice) and the Source of each version of the file."""

    def __init__(self, filename: str, enabled: CodeFilter, project=None) -> None:
        self._filename = filename
        self._enabled = enabled
        self._project = project
        self._attempts: dict[tuple, _Attempt] = {}
        self._sources: dict[bytes, Source] = {}

    def lint(self, data: bytes) -> FileResult:
        try:
            source = self._source(data)
        except (UnicodeDecodeError, SyntaxError):
            source = data  # the engine reports why it cannot be decoded
        return lint_source(source, self._filename, self._enabled, project=self._project)

    def _source(self, data: bytes) -> Source:
        if data not in self._sources:
            self._sources[data] = Source.from_bytes(data)
        return self._sources[data]

    def checked(self, data: bytes, result: FileResult, relint: bool = True) -> FileResult:
        """`result` with the fixes that fail alone dropped. When all the non-overlapping fixes
        succeed together, as they do in most files, that one attempt clears them all. Without
        `relint`, a fix fails only where the fixed code does not encode or compile."""
        rejected = self._relint_rejected if relint else self._compile_rejected
        offered = [f for f in result.findings if f.fix is not None]
        batch = _non_overlapping(offered)
        cleared = {id(finding) for finding in self._accepted(data, result, batch, rejected)}
        for finding in (f for f in offered if id(f) not in cleared):  # a set, not a scan per finding
            reason = rejected(data, result, [finding])
            if reason is not None:
                result = _without_fix(result, finding, reason)
        return result

    def _relint_rejected(self, data: bytes, result: FileResult, chosen: Sequence[Finding]) -> Optional[str]:
        return self._attempt(data, result, chosen).rejected

    def _compile_rejected(self, data: bytes, result: FileResult, chosen: Sequence[Finding]) -> Optional[str]:
        return self._applied(data, chosen)[1]

    def _applied(self, data: bytes, chosen: Sequence[Finding]) -> tuple[bytes, Optional[str]]:
        """The file with the chosen fixes applied, and why they are rejected before any second
        lint (None when the fixed code compiles)."""
        source = self._source(data)
        try:
            fixed = source.apply(edit for finding in chosen for edit in finding.fix.edits)
        except UnicodeEncodeError:
            return b"", f"its text cannot be written in {source.encoding}"
        error = compile_error(fixed, self._filename)
        return fixed, None if error is None else f"the fixed code would not compile ({error})"

    def _accepted(self, data: bytes, result: FileResult, batch: Sequence[Finding], rejected) -> list[Finding]:
        """The fixes of `batch` that succeed in groups: the whole batch, or else each half in
        turn, down to groups of one (`rejected(data, result, fixes)` says why fixes fail together,
        or None). A file with one odd fix among thousands costs a few dozen re-lints this way, not
        one per fix."""
        if len(batch) <= 1:
            return []  # a fix alone is checked by the caller
        if rejected(data, result, batch) is None:
            return list(batch)
        first, rest = batch[:len(batch) // 2], batch[len(batch) // 2:]
        return self._accepted(data, result, first, rejected) + self._accepted(data, result, rest, rejected)

    def apply_some(self, data: bytes, result: FileResult,
                   chosen: Sequence[Finding]) -> tuple[Optional[_Attempt], FileResult]:
        """The attempt with all of `chosen` if it is accepted, else with the first fix accepted
        alone (None when none is); `result` with the fixes rejected on the way dropped."""
        if not chosen:
            return None, result
        attempt = self._attempt(data, result, chosen)
        if attempt.rejected is None:
            return attempt, result
        for finding in chosen:
            attempt = self._attempt(data, result, [finding])
            if attempt.rejected is None:
                return attempt, result
            result = _without_fix(result, finding, attempt.rejected)
        return None, result

    def _attempt(self, data: bytes, before: FileResult, chosen: Sequence[Finding]) -> _Attempt:
        key = (data, tuple((f, f.fix) for f in chosen))
        if key not in self._attempts:
            self._attempts[key] = self._try(data, before, tuple(chosen))
        return self._attempts[key]

    def _try(self, data: bytes, before: FileResult, chosen: tuple[Finding, ...]) -> _Attempt:
        fixed, rejected = self._applied(data, chosen)
        if rejected is not None:
            return _Attempt(chosen, rejected=rejected)
        after = self.lint(fixed)
        rejected = after.error or _left_in_place(chosen, before, after) or _added(before, after)
        return _Attempt(chosen, fixed, after, rejected)


def _without_fix(result: FileResult, finding: Finding, reason: str) -> FileResult:
    replacement = dataclasses.replace(finding, fix=None, fix_rejected=reason)
    findings = tuple(replacement if f is finding else f for f in result.findings)
    return dataclasses.replace(result, findings=findings)


def _left_in_place(chosen: Sequence[Finding], before: FileResult, after: FileResult) -> Optional[str]:
    """Why not, when some fixed finding (same code and message) is still there."""
    fixed = Counter(map(_identity, chosen))
    counts_before = Counter(map(_identity, before.findings))
    counts_after = Counter(map(_identity, after.findings))
    if any(counts_after[key] > counts_before[key] - count for key, count in fixed.items()):
        return "the fixed code still has the finding"
    return None


_NUMBER = re.compile(r"\d+")


def _identity(finding: Finding) -> tuple[str, str]:
    """A finding as the fixed code would still show it: its code and message without the line
    numbers the message cites ("the 'return' at line 16"), which the fixes' added lines shift
    onto other findings' (in generated code, alike message for message)."""
    return finding.code, _NUMBER.sub("#", finding.message)


def _added(before: FileResult, after: FileResult) -> Optional[str]:
    new = Counter(f.code for f in after.findings) - Counter(f.code for f in before.findings)
    return f"the fixed code would have a new {', '.join(sorted(new))} finding" if new else None


def compile_error(source: bytes, filename: str) -> Optional[str]:
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return str(error)
    return None


def _non_overlapping(findings: Sequence[Finding]) -> list[Finding]:
    """The fixes that overlap no fix before them, in the order of their spans: each starts
    where the furthest end taken so far lies or after (sorted, that is every earlier one)."""
    chosen: list[Finding] = []
    furthest = None
    for span, finding in sorted(((_span(f.fix.edits), f) for f in findings), key=lambda pair: pair[0]):
        if furthest is None or span[0] >= furthest:
            chosen.append(finding)
            furthest = span[1] if furthest is None else max(furthest, span[1])
    return chosen


def _span(edits: Sequence[Edit]) -> tuple:
    start = min((edit.line, edit.column) for edit in edits)
    end = max((edit.end_line, edit.end_column) for edit in edits)
    return (start, end)

"""What `verify` and `verify --fix` report: the run, the findings, and how they meet.

`verify SCRIPT` lints the script, runs it, and says of each runtime event which finding predicted
it ("predicted by BCL001 at train.py:12") or that none did, and of each finding whether its line
failed in this run, ran without failing, or was not reached. `verify --fix SCRIPT` also applies
the fixes to a temporary copy (never to the script), runs that copy, and says per finding what the
copy did there. A verdict names only what ran: the copy is ok at a fixed finding only where it ran
the finding's place and ended ok as a whole, and `--fix` succeeds only when it is ok at every fixed
finding. `--nproc 2,3` repeats all this at each world size (`WorldSizes`).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from bcast_lint.harness import verify
from bcast_lint.harness.link import Script, fix_script, has_script_lines, lint_script, moved, ties
from bcast_lint.harness.report import OK, VerifyResult, render_text
from bcast_lint.model import SAFE, Finding


@dataclass(frozen=True)
class RunOptions:
    """How to run the job: everything of `verify` but the script."""

    nproc: int = 2
    nnodes: int = 1
    timeout: float = 60.0
    script_args: tuple[str, ...] = ()
    check: tuple[str, ...] = ()


def _run(path: str, options: RunOptions, shown: str | None = None) -> VerifyResult:
    return verify(path, options.nproc, options.timeout, options.script_args, options.check, options.nnodes, shown)


def _finding_label(finding: Finding, shown: str) -> str:
    return f"{finding.code} at {shown}:{finding.line}"


# ---------------------------------------------------------------- plain verify


@dataclass(frozen=True)
class LinkedRun:
    """One run of the script next to its findings; `ties[i]` are the events finding i predicted."""

    script: str
    result: VerifyResult
    findings: tuple[Finding, ...]
    ties: tuple[tuple[int, ...], ...]
    located: tuple[bool, ...]  # per event: whether it happened at lines of the script
    reached: tuple[bool, ...] = ()  # per finding: whether some rank ran its place

    @property
    def ok(self) -> bool:
        return self.result.ok

    def predicted_by(self, event: int) -> tuple[Finding, ...]:
        return tuple(finding for finding, tied in zip(self.findings, self.ties) if event in tied)

    def events_of(self, finding: int) -> tuple[str, ...]:
        return tuple(self.result.events[index].text for index in self.ties[finding])

    def as_dict(self) -> dict:
        document = self.result.as_dict()
        for index, event in enumerate(document["events"]):
            event["findings"] = [_brief(finding) for finding in self.predicted_by(index)]
            event["static"] = "predicted" if event["findings"] else "no static finding" if self.located[index] else None
        document["findings"] = [
            {**finding.as_dict(), "events": list(tied), "observed": bool(tied), "reached": self.was_reached(index)}
            for index, (finding, tied) in enumerate(zip(self.findings, self.ties))
        ]
        return document

    def was_reached(self, finding: int) -> bool:
        return finding < len(self.reached) and self.reached[finding]

    def render_text(self, unobserved: bool = True) -> str:
        """The verdict with its ties; `unobserved`: list the findings no event bore out."""
        notes = tuple(self._note(index) for index in range(len(self.result.events)))
        lines = [render_text(self.result, self.script, notes)]
        if not unobserved:
            return lines[0]
        for index, (finding, tied) in enumerate(zip(self.findings, self.ties)):
            if not tied:
                seen = "not observed in this run" if self.was_reached(index) else "not reached in this run"
                lines.append(f"  {_finding_line(finding)}: {seen}")
        return "\n".join(lines)

    def _note(self, event: int) -> tuple[str, ...]:
        predicted = self.predicted_by(event)
        if predicted:
            return (f"predicted by {', '.join(_finding_label(f, self.script) for f in predicted)}",)
        return ("no static finding here",) if self.located[event] else ()


def _brief(finding: Finding) -> dict:
    return {"code": finding.code, "line": finding.line, "column": finding.column}


def _finding_line(finding: Finding) -> str:
    return f"{finding.code} {finding.filename}:{finding.line}:{finding.column} {finding.message}"


def link(script: str, source: bytes, findings: tuple[Finding, ...], result: VerifyResult) -> LinkedRun:
    parsed = Script.parse(script, source)
    located = tuple(has_script_lines(event, parsed) for event in result.events)
    lines = parsed.lines(result.reached)
    reached = tuple(parsed.reached(finding, lines) for finding in findings)
    return LinkedRun(script, result, findings, ties(findings, result, parsed), located, reached)


def verify_script(script: str, options: RunOptions) -> LinkedRun:
    source = Path(script).read_bytes()
    return link(script, source, lint_script(script, source), _run(script, options))


# ---------------------------------------------------------------- verify --fix


@dataclass(frozen=True)
class FindingProof:
    """One finding: what the original run did there, and what the fixed copy did there. The
    fixed copy is ok at a finding only when it ran the finding's place, nothing failed there, and
    the copy as a whole ended ok: a copy that hangs or fails proves no finding."""

    finding: Finding
    fixed: bool
    reason: str  # why it was not fixed; empty when fixed
    original: tuple[str, ...]  # the original run's events at this finding
    after: tuple[str, ...]  # the fixed copy's events at the finding's place
    reached: bool = False  # whether the original run ran the finding's line
    fixed_reached: bool = False  # whether the fixed copy ran the finding's place
    copy_outcome: str = ""  # the fixed copy's outcome; empty when no copy ran

    @property
    def fixed_ok(self) -> bool:
        return self.fixed and self.fixed_reached and not self.after and self.copy_outcome == OK

    def as_dict(self) -> dict:
        return {**self.finding.as_dict(), "fixed": self.fixed, "not_fixed_because": self.reason or None,
                "original_events": list(self.original), "observed": bool(self.original), "reached": self.reached,
                "fixed_events": list(self.after), "fixed_reached": self.fixed_reached,
                "fixed_ok": self.fixed_ok}  # fmt: skip


@dataclass(frozen=True)
class FixProof:
    original: LinkedRun
    fixed: LinkedRun | None  # None when no fix applied: the copy would be the original
    proofs: tuple[FindingProof, ...]

    @property
    def ok(self) -> bool:
        copy_ok = (self.fixed or self.original).ok
        return copy_ok and all(proof.fixed_ok for proof in self.proofs if proof.fixed)

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "script": self.original.script,
            "fixed": sum(proof.fixed for proof in self.proofs),
            "findings": [proof.as_dict() for proof in self.proofs],
            "original": self.original.as_dict(),
            "fixed_copy": self.fixed.as_dict() if self.fixed else None,
        }

    def render_text(self) -> str:
        script = self.original.script
        fixed = sum(proof.fixed for proof in self.proofs)
        lines = [f"{script}: {len(self.proofs)} finding{'s' if len(self.proofs) != 1 else ''}, {fixed} fixed "
                 f"in a temporary copy"]  # fmt: skip
        for proof in self.proofs:
            lines += _proof_lines(proof)
        lines.append("")
        lines.append(f"original run: {self.original.render_text()}")
        if self.fixed is not None:
            lines.append(f"fixed copy:   {self.fixed.render_text(unobserved=False)}")
            lines.append(f"(`bcast-lint --diff{' --unsafe-fixes' if self._unsafe else ''} {script}` shows the fixes)")
        else:
            lines.append("fixed copy: no fix applies, so the copy is the original")
        return "\n".join(lines)

    @property
    def _unsafe(self) -> bool:
        return any(proof.fixed and proof.finding.fix and proof.finding.fix.applicability != SAFE
                   for proof in self.proofs)  # fmt: skip


def _proof_lines(proof: FindingProof) -> list[str]:
    lines = [f"  {_finding_line(proof.finding)}"]
    if proof.original:
        lines += [f"    original run: {text}" for text in proof.original]
    elif proof.reached:
        lines.append("    original run: nothing observable at this finding in this run")
    else:
        lines.append("    original run: not reached: no rank ran this line")
    if not proof.fixed:
        lines.append(f"    not fixed: {proof.reason}")
    elif proof.after:
        lines += [f"    fixed copy:   still fails here: {text}" for text in proof.after]
    elif not proof.fixed_reached:
        lines.append(f"    fixed copy:   not reached: no rank ran this line (the fixed copy: {proof.copy_outcome})")
    elif proof.copy_outcome != OK:
        lines.append(f"    fixed copy:   ran here, not proven: the fixed copy as a whole ended {proof.copy_outcome}")
    else:
        lines.append("    fixed copy:   ok here")
    return lines


def verify_fix(script: str, options: RunOptions, unsafe: bool) -> FixProof:
    source = Path(script).read_bytes()
    findings = lint_script(script, source)
    original = link(script, source, findings, _run(script, options))
    fixed = fix_script(script, source, unsafe)
    flags = _fixed_flags(findings, fixed.remaining) if fixed.source != source else [False] * len(findings)
    if not any(flags):
        return FixProof(original, None, _proofs(original, findings, flags, unsafe, None))
    shown = f"{script} (fixed)"
    with _temporary_copy(script, fixed.source) as copy:
        result = _run(copy, options, shown)
    moved_findings = tuple(moved(finding, source, fixed.source, shown) for finding in findings)
    fixed_run = link(shown, fixed.source, moved_findings, result)
    return FixProof(original, fixed_run, _proofs(original, findings, flags, unsafe, fixed_run))


def _fixed_flags(findings: tuple[Finding, ...], remaining: tuple[Finding, ...]) -> list[bool]:
    """Which findings the fixes removed: those with a fix whose code and message no longer occur
    as often (fixes move lines, so positions cannot be compared)."""
    left = Counter((finding.code, finding.message) for finding in remaining)
    flags = []
    for finding in findings:
        key = (finding.code, finding.message)
        if finding.fix is not None and left[key] == 0:
            flags.append(True)
        else:
            left[key] -= 1
            flags.append(False)
    return flags


def _proofs(original: LinkedRun, findings, fixed_flags, unsafe: bool,
            fixed_run: LinkedRun | None) -> tuple[FindingProof, ...]:  # fmt: skip
    proofs = []
    for index, (finding, fixed) in enumerate(zip(findings, fixed_flags)):
        ran = fixed and fixed_run is not None
        after = fixed_run.events_of(index) if ran else ()
        reason = "" if fixed else _not_fixed_because(finding, unsafe)
        copy = {"fixed_reached": fixed_run.was_reached(index), "copy_outcome": fixed_run.result.outcome} if ran else {}
        proofs.append(FindingProof(finding, fixed, reason, original.events_of(index), after,
                                   original.was_reached(index), **copy))  # fmt: skip
    return tuple(proofs)


def _not_fixed_because(finding: Finding, unsafe: bool) -> str:
    if finding.fix_rejected:
        return f"its fix was rejected: {finding.fix_rejected}"
    if finding.fix is None:
        return f"the rule has no automatic fix for it; see `bcast-lint rule {finding.code}`"
    if finding.fix.applicability != SAFE and not unsafe:
        return "its fix is unsafe; --unsafe-fixes applies it"
    return "its fix was not applied"


# ---------------------------------------------------------------- several world sizes


@dataclass(frozen=True)
class WorldSizes:
    """One verification run at several sizes (`--nproc 2,3`). Many real hangs appear only where
    the data does not split evenly over the ranks (one rank gets one more batch, shard or key),
    so a program can pass on 2 ranks and fail on 3; this says which sizes fail."""

    nnodes: int
    reports: tuple[tuple[int, "LinkedRun | FixProof"], ...]  # (processes per node, its report)

    @property
    def ok(self) -> bool:
        return all(report.ok for _, report in self.reports)

    @property
    def failing(self) -> tuple[int, ...]:
        """The world sizes whose report is not ok."""
        return tuple(nproc * self.nnodes for nproc, report in self.reports if not report.ok)

    def render_text(self) -> str:
        lines = []
        for nproc, report in self.reports:
            lines += [f"== world size {self._size(nproc)} ==", report.render_text(), ""]
        lines += [f"world size {self._size(nproc)}: {_size_verdict(report)}" for nproc, report in self.reports]
        sizes = ", ".join(str(size) for size in self.failing)
        lines.append(f"fails at world size {sizes}" if self.failing else "ok at every world size")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "failing_world_sizes": list(self.failing),
            "world_sizes": [{"world_size": nproc * self.nnodes, "nproc": nproc, "nnodes": self.nnodes,
                             "ok": report.ok, "verdict": _size_verdict(report), "report": report.as_dict()}
                            for nproc, report in self.reports],
        }  # fmt: skip

    def _size(self, nproc: int) -> str:
        return str(nproc) if self.nnodes == 1 else f"{nproc * self.nnodes} ({self.nnodes} nodes of {nproc})"


def _size_verdict(report: "LinkedRun | FixProof") -> str:
    if isinstance(report, LinkedRun):
        return report.result.outcome
    original = report.original.result.outcome
    if report.fixed is None:
        return f"{original}; no fix applies"
    return f"{original}; fixed copy {report.fixed.result.outcome}{'' if report.ok else ', not proven'}"


@contextmanager
def _temporary_copy(script: str, source: bytes) -> Iterator[str]:
    """The fixed source as a hidden file beside the script, so its imports and paths relative to
    `__file__` resolve as the original's do; in a temporary directory where that is not writable."""
    directory = os.path.dirname(os.path.abspath(script))
    stem = Path(script).stem
    try:
        handle, path = tempfile.mkstemp(prefix=f".{stem}.", suffix=".bcast-lint-fixed.py", dir=directory)
    except OSError:
        with tempfile.TemporaryDirectory(prefix="bcast-lint-fixed-") as elsewhere:
            copy = Path(elsewhere) / Path(script).name
            copy.write_bytes(source)
            yield str(copy)
        return
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(source)
        yield path
    finally:
        os.unlink(path)


__all__ = ["OK", "FixProof", "LinkedRun", "RunOptions", "WorldSizes", "verify_fix", "verify_script"]

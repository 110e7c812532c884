"""Static findings and runtime events on one page: which finding predicted which failure.

`verify` lints the script with the same engine as the CLI (`lint_script`, `fix_script`: the only
two calls into it) and ties each runtime event to the findings it bears out. A finding is tied to
an event when

- the event happened inside the finding's range (a TypeError at the flagged broadcast, a rank
  waiting in it, a broadcast that diverged there), or, for a `--check` name that ended different
  on the ranks, the finding is on a line that assigns the name or uses a variable its assignment
  reads; or
- the collective the finding leads to is one the event involves: the first collective the run
  reached at or after the finding's line in the same function. So a placeholder flagged where it
  is allocated is tied to the divergence at the broadcast below it, and `x = dist.broadcast(x)`
  to the AttributeError one line later, on the rank whose last completed broadcast it was.

An event with script lines and no finding says "no static finding here" (what the linter still
misses); a finding tied to no event was "not observed in this run" (BCL004 on a CPU run).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
from dataclasses import dataclass

from bcast_lint.model import Finding
from bcast_lint.harness.report import RuntimeEvent, VerifyResult


# ---------------------------------------------------------------- the engine, called in one place


@dataclass(frozen=True)
class Fixed:
    """What fixing the script produced: its new bytes and the findings the fixes left."""

    source: bytes
    remaining: tuple[Finding, ...]


def lint_script(path: str, source: bytes) -> tuple[Finding, ...]:
    """The script's findings under the project's configuration, as `bcast-lint SCRIPT` reports
    them (a fix the fixer would reject already dropped, with its reason)."""
    from bcast_lint.runner import LINT

    return _pipeline(path, source, LINT, unsafe=False).result.findings


def fix_script(path: str, source: bytes, unsafe: bool) -> Fixed:
    """The script with every applicable fix applied, as `bcast-lint --fix [--unsafe-fixes]` would."""
    from bcast_lint.runner import FIX

    outcome = _pipeline(path, source, FIX, unsafe)
    return Fixed(outcome.new if outcome.new is not None else source, outcome.result.findings)


def _pipeline(path: str, source: bytes, mode: str, unsafe: bool):
    """The CLI's own per-file pipeline, with the configuration `bcast-lint SCRIPT` would find,
    and a Project of its own (verify's run is this one file)."""
    from bcast_lint.analysis.project import Project
    from bcast_lint.config import load_settings
    from bcast_lint.runner import Task, process

    settings = load_settings([path])
    settings = dataclasses.replace(settings, unsafe_fixes=settings.unsafe_fixes or unsafe)
    return process(Task(path, source), settings, mode, Project())


# ---------------------------------------------------------------- tying findings to events


@dataclass(frozen=True)
class Script:
    """The script's name as the run reports it in sites ("name:line"), and its parsed lines."""

    shown: str
    tree: ast.Module | None
    functions: tuple[tuple[int, int], ...] = ()  # (first, last line) of every function
    statements: tuple[tuple[int, int], ...] = ()  # (first, last line) of every statement

    @classmethod
    def parse(cls, shown: str, source: bytes) -> "Script":
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return cls(shown, None)
        functions = tuple(
            (node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        )  # fmt: skip
        statements = tuple((node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
                           if isinstance(node, ast.stmt))  # fmt: skip
        return cls(shown, tree, functions, statements)

    def line(self, site: str) -> int | None:
        path, _, line = site.rpartition(":")
        return int(line) if path == self.shown and line.isdigit() else None

    def lines(self, sites: tuple[str, ...]) -> set[int]:
        return {line for line in map(self.line, sites) if line is not None}

    def related_lines(self, name: str) -> set[int]:
        """Lines that assign `name` (a `--check` name: a module-level variable), and lines that use
        a variable those assignments read (`weights = flatten(model)`: every line using `model`).
        Imported names (modules, functions) are not followed."""
        if self.tree is None:
            return set()
        assignments = [node for node in ast.walk(self.tree)
                       if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and name in _stored(node)]  # fmt: skip
        read = {node.id for statement in assignments for node in ast.walk(statement)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}  # fmt: skip
        followed = read - _imported(self.tree) - {name}
        uses = {node.lineno for node in ast.walk(self.tree) if isinstance(node, ast.Name) and node.id in followed}
        return {statement.lineno for statement in assignments} | uses

    def reached(self, finding: Finding, reached: set[int]) -> bool:
        """Whether the run ran the finding's place: a line of its range, or the first line of the
        innermost statement holding it (Python may report a statement spread over several
        lines at its first line only)."""
        own = set(range(finding.line, finding.end_line + 1))
        holders = [span for span in self.statements if span[0] <= finding.line <= span[1]]
        if holders:
            own.add(max(holders)[0])  # the innermost: the latest start
        return bool(own & reached)

    def function(self, line: int) -> tuple[int, int] | None:
        """The span of the innermost function around `line` (the latest start); None at module level."""
        return max((span for span in self.functions if span[0] <= line <= span[1]), default=None)


def _stored(statement: ast.stmt) -> set[str]:
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


def _imported(tree: ast.Module) -> set[str]:
    return {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}  # fmt: skip


def ties(findings: tuple[Finding, ...], result: VerifyResult, script: Script) -> tuple[tuple[int, ...], ...]:
    """For each finding, the indices of the runtime events it is tied to."""
    reached = sorted(script.lines(_collective_sites(result)))
    return tuple(
        tuple(index for index, event in enumerate(result.events) if _tied(finding, event, script, reached))
        for finding in findings
    )


def _collective_sites(result: VerifyResult) -> tuple[str, ...]:
    calls = tuple(call.site for broadcast in result.broadcasts for call in broadcast.calls)
    return calls + tuple(site for event in result.events for site in event.collectives)


def _tied(finding: Finding, event: RuntimeEvent, script: Script, reached: list[int]) -> bool:
    here = script.lines(event.sites) | {line for name in event.names for line in script.related_lines(name)}
    if any(finding.line <= line <= finding.end_line for line in here):
        return True
    leads_to = _next_collective(finding.line, script, reached)
    return leads_to is not None and leads_to in script.lines(event.collectives)


def _next_collective(line: int, script: Script, reached: list[int]) -> int | None:
    """The first collective the run reached at or after `line`, in the same function (at module
    level: outside every function)."""
    function = script.function(line)
    return next((site for site in reached if site >= line and script.function(site) == function), None)


def has_script_lines(event: RuntimeEvent, script: Script) -> bool:
    return bool(script.lines(event.sites) or event.names)


# ---------------------------------------------------------------- a finding's place in the fixed copy


def moved(finding: Finding, original: bytes, fixed: bytes, shown: str) -> Finding:
    """The finding at the lines its code occupies in the fixed copy (the fixes may add lines)."""
    matcher = difflib.SequenceMatcher(None, original.splitlines(), fixed.splitlines(), autojunk=False)

    def new_lines(line: int) -> tuple[int, int]:
        """Where `line` went: itself moved, or the whole block of lines a fix rewrote it into."""
        for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
            if a_start < line <= a_end:
                if tag == "equal":
                    return (b_start + line - a_start,) * 2
                return b_start + 1, max(b_start + 1, b_end)
        return line, line

    line = new_lines(finding.line)[0]
    return dataclasses.replace(finding, filename=shown, line=line, end_line=max(line, new_lines(finding.end_line)[1]))

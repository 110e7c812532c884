"""Lint one file's bytes: pre-filter, parse, analyse once, run the selected rules, apply noqa.

The CLI, the flake8 plugin and the harness all call `lint_source`. libcst is imported only once a
file passes the pre-filter, so a run over files without collectives never pays for it.
"""

from __future__ import annotations

import ast
import gc
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, Iterator, Optional, Union

from bcast_lint.codes import SYNTAX_ERROR
from bcast_lint.model import FileResult, Finding
from bcast_lint.noqa import is_suppressed
from bcast_lint.prefilter import IF_HELPERS, PARSE, verdict
from bcast_lint.source import Source

if TYPE_CHECKING:
    from bcast_lint.analysis.project import Project

CodeFilter = Callable[[str], bool]


def _everything(code: str) -> bool:
    return True


def lint_source(source: Union[bytes, str, Source], filename: str, enabled: CodeFilter = _everything,
                honour_noqa: bool = True, tree: Optional[ast.Module] = None,
                project: Optional["Project"] = None) -> FileResult:
    """Findings for one file's contents; never raises for bad input (see FileResult.error).

    Bytes are decoded as Python would (coding cookie, BOM); text is taken as already decoded; a
    Source is the file already decoded by a caller that reads it too (the fixer, --add-noqa).
    `tree` is CPython's parse of `source`, when the caller has one (flake8 does). `project`
    holds the module index and summaries shared by the files of one run; a caller linting one
    file alone may leave it out, and this call makes its own.
    """
    if project is None:
        project = _new_project()
    # What CPython parses below: the caller's text, or the file's bytes (it reads the cookie itself).
    given = source.data if isinstance(source, Source) else source
    if isinstance(source, str):
        source = Source.from_text(source)
    if not worth_parsing(source.data if isinstance(source, Source) else source, filename, project):
        return FileResult(filename)
    try:
        model = source if isinstance(source, Source) else Source.from_bytes(source)
    except (UnicodeDecodeError, SyntaxError) as error:  # SyntaxError: from the cookie's lines
        return FileResult(filename, error=f"cannot decode: {error}")
    try:
        return _lint_parsed(given, model, filename, enabled, honour_noqa, tree, project)
    except RecursionError:
        return FileResult(filename, error="too deeply nested to analyse (RecursionError)")


def _new_project() -> "Project":
    from bcast_lint.analysis.project import Project  # ast and hashlib: only once a file is linted

    return Project()


def worth_parsing(data: bytes, filename: str, project: "Project", read: Optional[set] = None) -> bool:
    """The pre-filter, with its second chance: a file with a rank condition that imports a
    project function which runs a collective. `read` receives the paths of the other modules
    the second chance read."""
    found = verdict(data)
    if found == IF_HELPERS:
        return project.imports_collective_helper(filename, data, read)
    return found == PARSE


# Linting a large file allocates a million short-lived tree nodes that reference counting frees;
# at CPython's default thresholds (700, 10, 10) the cycle collector scans them over and over,
# a third of a run's time. Collecting rarely costs some memory (well under 300 MB on 2 M lines).
RARE_COLLECTION_THRESHOLDS = (200_000, 30, 30)


@contextmanager
def rare_garbage_collection() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(*RARE_COLLECTION_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def _lint_parsed(given: Union[bytes, str], source: Source, filename: str, enabled: CodeFilter,
                 honour_noqa: bool, tree: Optional[ast.Module], project: "Project") -> FileResult:
    """`given` is what the caller passed, which CPython parses as it would the file."""
    import libcst as cst

    from bcast_lint.analysis.context import file_context
    from bcast_lint.analysis.module import Coverage, run_summaries

    python_error = None
    if tree is None:
        tree, python_error = _python_parse(given, filename)
    if isinstance(python_error, (MemoryError, RecursionError)):
        return FileResult(filename, error="too deeply nested to parse (Python's own parser gives up too)")
    if isinstance(python_error, SyntaxError) and _bracket_depth(source.data) > _MAX_BRACKET_DEPTH:
        finding = _python_syntax_finding(python_error, filename)
        return FileResult(filename, (finding,))  # whatever the selection: nothing was checked
    nul = source.nul_position() if python_error is not None else None
    if nul is not None:
        return FileResult(filename, (_nul_finding(nul, filename),))
    context = file_context(run_summaries(project), filename, source, tree) if tree is not None else None
    pieces, frame = ([(source.text, source)], frozenset()) if tree is None else \
        _parts(source, tree, context.helper_words())
    findings: list[Finding] = []
    coverages = []
    for code, piece in pieces:  # one part's tree at a time (bcast_lint.parts)
        try:
            module = cst.parse_module(code)
        except cst.ParserSyntaxError as error:
            return _unparsable(error, python_error, filename)
        found, coverage = run_rules(module, filename, enabled, piece, context, tree, frame if coverages else frozenset())
        findings.extend(found)
        coverages.append(coverage)
    findings = list(dict.fromkeys(findings))  # the frame's findings come with every part
    if findings and honour_noqa:
        findings = [f for f in findings if not is_suppressed(f.code, source.line(f.line))]
    dependencies = context.dependencies() if context is not None else ()
    coverage = Coverage.merged(coverages)
    return FileResult(filename, tuple(sorted(findings, key=_order)), analysed=coverage.analysed,
                      unresolved=coverage.unresolved, dependencies=dependencies,
                      frameworks=coverage.frameworks)


def _unparsable(error, python_error: Optional[BaseException], filename: str) -> FileResult:
    """LibCST rejects the text: Python's own error where there is one, as a finding."""
    if python_error is None:
        return FileResult(filename, error=f"LibCST cannot parse this file, which Python accepts: {error.message}")
    if isinstance(python_error, SyntaxError) and python_error.lineno:
        finding = _python_syntax_finding(python_error, filename)  # LibCST says 1:1 for tokenizer errors
    else:
        finding = _syntax_finding(error, filename)
    return FileResult(filename, (finding,))  # whatever the selection: nothing was checked


# LibCST's native parser recurses without a limit and overflows the C stack (a segfault, which no
# except clause catches) on a few thousand nested brackets or unary operators. CPython's parser
# stops at 200 brackets and raises MemoryError or RecursionError on deeper expressions, so a file
# it accepts, or rejects for an ordinary reason with shallow brackets, is safe to give to LibCST.
# Code Python rejects for ordinary reasons still goes to LibCST: it may target a newer Python.
_MAX_BRACKET_DEPTH = 200
_OPENING, _CLOSING = b"([{", b")]}"
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in _OPENING + _CLOSING)


def _python_parse(source: Union[bytes, str], filename: str) -> tuple[Optional[ast.Module], Optional[BaseException]]:
    """CPython's own parse: the tree (for reduce_source) or why it failed."""
    try:
        return compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True), None
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        return None, error

def _bracket_depth(data: bytes) -> int:
    """The deepest bracket nesting, counting brackets in strings and comments too (an overestimate)."""
    brackets = data.translate(None, _NOT_BRACKETS)
    if len(brackets) <= _MAX_BRACKET_DEPTH:
        return len(brackets)
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in _OPENING else -1
        deepest = max(deepest, depth)
    return deepest


def _python_syntax_finding(error: SyntaxError, filename: str) -> Finding:
    line, column = error.lineno or 1, error.offset or 1
    message = f"{type(error).__name__}: {error.msg}"  # IndentationError and TabError say so
    return Finding(SYNTAX_ERROR, message, filename, line, column, line, column)


def _nul_finding(position: tuple[int, int], filename: str) -> Finding:
    line, column = position
    return Finding(SYNTAX_ERROR, "SyntaxError: source code cannot contain null bytes", filename, line, column,
                   line, column)


def _parts(source: Source, tree: ast.Module, helpers: frozenset) -> tuple[list[tuple[str, Source]], frozenset[int]]:
    """The texts LibCST should parse, each with the source that maps its lines back to the
    file's, and the original lines of the frame that every part holds (bcast_lint.parts)."""
    from bcast_lint.parts import split
    from bcast_lint.reduce import reduce_source

    parts, frame = split(reduce_source(source, tree, helpers), tree)
    return [(part.text, source.parsed(part.line_numbers)) for part in parts], frame


def run_rules(module, filename: str, enabled: CodeFilter, source: Optional[Source] = None,
              context=None, tree: Optional[ast.Module] = None, counted: frozenset = frozenset()):
    """The findings of the enabled rules, and the module's Coverage (`tree`, CPython's parse of
    the file, gives the lines of the calls it could not resolve; calls on the original lines
    `counted`, the frame an earlier part counted, are left out of it)."""
    from bcast_lint.analysis.module import ModuleAnalysis
    from bcast_lint.codes import RULES

    analysis = ModuleAnalysis(module, filename, source, context)
    coverage = analysis.coverage(tree, counted)
    if not analysis.calls and not analysis.overrides_a_collective_hook():
        return [], coverage
    findings = []
    for spec in RULES:
        if enabled(spec.code):
            reports = spec.load()().check(analysis)
            findings.extend(_finding(analysis, spec.code, report) for report in reports)
    return findings, coverage


def _finding(analysis, code: str, report) -> Finding:
    where = analysis.position(report.node)
    return Finding(code, report.message, analysis.filename, where.start.line, where.start.column + 1,
                   where.end.line, where.end.column + 1, report.fix, report.help)


def _syntax_finding(error, filename: str) -> Finding:
    message = f"SyntaxError: {error.message}"
    return Finding(SYNTAX_ERROR, message, filename, error.raw_line, error.raw_column + 1,
                   error.raw_line, error.raw_column + 1)


def _order(finding: Finding):
    return (finding.line, finding.column, finding.code)

"""Report formats: what a run's findings look like to a person, a CI log, or another tool.

Every renderer returns the whole report as text ending in a newline ("" when a format has nothing
to say); the CLI chooses the stream. Findings are sorted by file, position and code first, so the
output does not depend on the order files were linted in.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence

from bcast_lint import __version__
from bcast_lint.codes import RULE_NAMES, SYNTAX_ERROR, SYNTAX_ERROR_NAME
from bcast_lint.model import UNSAFE, Edit, FileResult, Finding, Fix

# "full" (the default, as ruff's) shows each finding's source line and its help; "concise" is one
# line per finding, and "text" its older name, kept for existing scripts.
FORMATS = ("full", "concise", "text", "json", "json-lines", "github", "grouped", "sarif")
DEFAULT_FORMAT = "full"
_HUMAN_FORMATS = ("full", "concise", "text", "grouped")

TOOL_NAME = "bcast-lint"
# Where the project is published (the README's pre-commit example names it too), and each rule's
# page there (docs/rules/CODE.md) at the release tag of this version.
REPOSITORY_URL = "https://github.com/bcast-lint/bcast-lint"
RULE_DOCS_URL = REPOSITORY_URL + "/blob/v{version}/docs/rules/{code}.md"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

# BCL900 is not a rule, so it has no entry in RULE_NAMES; reports still need a name for it.
_CODE_NAMES = {**RULE_NAMES, SYNTAX_ERROR: SYNTAX_ERROR_NAME}


def render(
    results: Sequence[FileResult],
    fmt: str,
    *,
    show_fixes: bool = False,
    statistics: bool = False,
    fix_available_hint: bool = True,
    unsafe_fixes: bool = False,
    summary: bool = True,
    fixed: Sequence[Finding] = (),
    source_line: SourceLine | None = None,
    show_unresolved: bool = False,
) -> str:
    """The report for `results` in format `fmt` (one of FORMATS).

    File errors are left to render_errors(). `statistics` replaces the per-finding lines with a
    count per code (JSON for "json", the text table for any other format, as ruff does).
    `show_fixes` (human formats) lists the available fixes, and those applied. `fix_available_hint`
    adds the "[*] N fixable" line; `unsafe_fixes` says whether unsafe fixes count as available
    there. `summary=False` (--quiet) leaves out the closing summary lines. `fixed` are the
    findings --fix applied (`results` hold what remains). `source_line(filename, number)` gives
    the "full" format a line of a file (None: not available, and the line is left out).
    The summary also says how many collective calls were analysed and how many calls named like
    one could not be resolved; `show_unresolved` lists those.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    findings = _sorted_findings(results)
    unchecked = sum(1 for result in results if result.error)
    coverage = [] if fixed else _coverage_lines(results)  # after --fix, `results` are what remains
    closing = (coverage + _summary(findings, len(fixed), unchecked, fix_available_hint, unsafe_fixes)
               if summary else [])
    unresolved = _unresolved_lines(results) if show_unresolved else []
    if statistics:
        if fmt == "json":
            return _statistics_json(findings, results)
        return _lines(_statistics_lines(findings) + _framework_lines(results) + unresolved + closing)
    if fmt in _MACHINE_FORMATS:
        return _MACHINE_FORMATS[fmt](findings)
    if fmt == "full":
        body = _full_lines(findings, source_line or _no_source, unsafe_fixes)
    elif fmt == "grouped":
        body = _grouped_lines(findings)
    else:
        body = [_concise_line(f) for f in findings]
    if show_fixes:
        body += _fix_section(findings) + _fixed_section(fixed)
    return _lines(body + unresolved + closing)


def would_fix_summary(fixed: Sequence[Finding], results: Sequence[FileResult],
                      unsafe_fixes: bool) -> str:
    """What --diff says under the diff, in ruff's words ("Would fix 2 errors.")."""
    remaining = _sorted_findings(results)
    hidden = 0 if unsafe_fixes else sum(1 for f in remaining if f.fix and f.fix.applicability == UNSAFE)
    if fixed:
        more = f" ({_plural(hidden, 'additional fix', 'additional fixes')} available with --unsafe-fixes)"
        return _lines([f"Would fix {_plural(len(fixed), 'error')}{more if hidden else ''}."])
    if hidden:
        return _lines([f"No errors would be fixed ({_plural(hidden, 'fix', 'fixes')} available with "
                       "--unsafe-fixes)."])
    return ""


def render_errors(results: Sequence[FileResult]) -> str:
    """One `path: error: message` line per file that could not be checked."""
    return _lines([f"{r.filename}: error: {r.error}" for r in results if r.error])


def _sorted_findings(results: Sequence[FileResult]) -> list[Finding]:
    findings = [finding for result in results for finding in result.findings]
    return sorted(findings, key=lambda f: (f.filename, f.line, f.column, f.code, f.message))


def _lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


SourceLine = Callable[[str, int], "str | None"]


def _no_source(filename: str, number: int) -> None:
    return None


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


# --- full, concise, grouped ------------------------------------------------------------------


def _full_lines(findings: list[Finding], source_line: SourceLine, unsafe_fixes: bool) -> list[str]:
    """Ruff's full form: the header line, the source line with a caret under the range, and the
    remedy, each finding followed by a blank line."""
    lines: list[str] = []
    for finding in findings:
        applicable = finding.fix is not None and (unsafe_fixes or finding.fix.applicability != UNSAFE)
        marker = "[*] " if applicable else ""
        header = (f"{finding.filename}:{finding.line}:{finding.column}: {finding.code} "
                  f"{marker}{finding.message}")
        lines += [header, *_snippet(finding, source_line(finding.filename, finding.line))]
        if finding.help:
            lines.append(f"{' ' * len(str(finding.line))} = help: {finding.help}")
        lines.append("")
    return lines


def _snippet(finding: Finding, text: str | None) -> list[str]:
    if text is None:
        return []
    number = str(finding.line)
    gutter = " " * len(number)
    start = min(finding.column - 1, len(text))
    # A range over several lines is underlined to the end of its first one.
    end = finding.end_column - 1 if finding.end_line == finding.line else len(text)
    width = max(1, end - start)
    # Tabs stay tabs under the line, so the caret lines up however the terminal shows them.
    padding = "".join(char if char == "\t" else " " for char in text[:start])
    return [f"{gutter} |", f"{number} | {text}", f"{gutter} | {padding}{'^' * width} {finding.code}",
            f"{gutter} |"]


def _concise_line(finding: Finding) -> str:
    return f"{finding.filename}:{finding.line}:{finding.column}: {finding.code} {finding.message}"


def _grouped_lines(findings: list[Finding]) -> list[str]:
    lines: list[str] = []
    for filename in dict.fromkeys(f.filename for f in findings):
        lines.append(f"{filename}:")
        in_file = [f for f in findings if f.filename == filename]
        lines += [f"  {f.line}:{f.column} {f.code} {f.message}" for f in in_file]
        lines.append("")
    return lines


def _fix_section(findings: list[Finding]) -> list[str]:
    fixable = [f for f in findings if f.fix is not None]
    withheld = [f for f in findings if f.fix_rejected is not None]
    lines = []
    if fixable:
        lines += ["", "Available fixes:"]
        lines += [f"{f.filename}:{f.line}:{f.column}: {f.code} [{f.fix.applicability}] {f.fix.message}"
                  for f in fixable]
    if withheld:
        lines += ["", "Fixes withheld (--fix would reject them):"]
        lines += [f"{f.filename}:{f.line}:{f.column}: {f.code} {f.fix_rejected}" for f in withheld]
    return lines + [""] if lines else []


def _fixed_section(fixed: Sequence[Finding]) -> list[str]:
    if not fixed:
        return []
    lines = [f"Fixed {_plural(len(fixed), 'error')}:"]
    for f in sorted(fixed, key=lambda f: (f.filename, f.line, f.column, f.code)):
        lines.append(f"{f.filename}:{f.line}:{f.column}: {f.code} {f.fix.message if f.fix else ''}")
    return lines + [""]


def _summary(findings: list[Finding], fixed: int, unchecked: int, fix_available_hint: bool,
             unsafe_fixes: bool) -> list[str]:
    """Ruff's closing lines: "Found 4 errors (1 fixed, 3 remaining)." and the fix hint."""
    if fixed:
        total = fixed + len(findings)
        lines = [f"Found {_plural(total, 'error')} ({fixed} fixed, {len(findings)} remaining)."]
    elif findings:
        lines = [f"Found {_plural(len(findings), 'error')}."]
    elif unchecked:
        return [f"No findings, but {_plural(unchecked, 'file')} could not be checked."]
    else:
        return ["All checks passed!"]
    return lines + (_fix_hint(findings, unsafe_fixes) if fix_available_hint else [])


def _coverage_lines(results: Sequence[FileResult]) -> list[str]:
    """"Analysed 12 collective calls; 3 calls named like a collective could not be resolved
    (--show-unresolved lists them).": a clean run on code the analysis could not read must not
    look clean. Nothing when the run met no collective at all."""
    analysed = sum(result.analysed for result in results)
    unresolved = sum(len(result.unresolved) for result in results)
    if not analysed and not unresolved:
        return []
    line = f"Analysed {_plural(analysed, 'collective call')}"
    if unresolved:
        line += (f"; {_plural(unresolved, 'call')} named like a collective could not be resolved "
                 "(--show-unresolved lists them)")
    return [line + "."]


def _unresolved_lines(results: Sequence[FileResult]) -> list[str]:
    found = sorted((r.filename, line, text) for r in results for line, text in r.unresolved)
    if not found:
        return []
    return ["", "Calls named like a collective that could not be resolved:",
            *(f"{filename}:{line}: {text}()" for filename, line, text in found), ""]


def _fix_hint(findings: list[Finding], unsafe_fixes: bool) -> list[str]:
    applicabilities = [f.fix.applicability for f in findings if f.fix is not None]
    hidden = 0 if unsafe_fixes else applicabilities.count(UNSAFE)
    fixable = len(applicabilities) - hidden
    hidden_fixes = _plural(hidden, "hidden fix", "hidden fixes")
    note = f" ({hidden_fixes} can be enabled with the --unsafe-fixes option)" if hidden else ""
    if fixable:
        return [f"[*] {fixable} fixable with the --fix option{note}."]
    return [f"No fixes available{note}."] if hidden else []


def _statistics_rows(findings: list[Finding]) -> list[tuple[str, int, bool]]:
    counts = Counter(f.code for f in findings)
    fixable = {f.code for f in findings if f.fix is not None}
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [(code, count, code in fixable) for code, count in ordered]


def _statistics_lines(findings: list[Finding]) -> list[str]:
    rows = _statistics_rows(findings)
    return [f"{count}\t{code}\t{_CODE_NAMES.get(code, '')}" for code, count, _ in rows]


def _by_framework(results: Sequence[FileResult]) -> list[tuple[str, int, int]]:
    """(framework, collective calls analysed, unresolved), the most analysed first."""
    analysed: Counter = Counter()
    unresolved: Counter = Counter()
    for result in results:
        for framework, calls, missed in result.frameworks:
            analysed[framework] += calls
            unresolved[framework] += missed
    names = sorted(analysed.keys() | unresolved.keys(), key=lambda name: (-analysed[name], name))
    return [(name, analysed[name], unresolved[name]) for name in names]


def _framework_lines(results: Sequence[FileResult]) -> list[str]:
    """The coverage per framework under the codes' table: what was analysed, what could not be resolved."""
    rows = _by_framework(results)
    if not rows:
        return []
    return ["", "Collective calls by framework (analysed, unresolved):",
            *(f"{analysed}\t{unresolved}\t{name}" for name, analysed, unresolved in rows)]


def _statistics_json(findings: list[Finding], results: Sequence[FileResult]) -> str:
    rows = [
        {"code": code, "name": _CODE_NAMES.get(code, ""), "count": count, "fixable": fixable}
        for code, count, fixable in _statistics_rows(findings)
    ]
    unresolved = [{"filename": r.filename, "line": line, "call": text}
                  for r in results for line, text in r.unresolved]
    frameworks = [{"framework": name, "analysed": analysed, "unresolved": missed}
                  for name, analysed, missed in _by_framework(results)]
    report = {"codes": rows, "collective_calls_analysed": sum(r.analysed for r in results),
              "unresolved": sorted(unresolved, key=lambda u: (u["filename"], u["line"])),
              "frameworks": frameworks}
    return json.dumps(report, indent=2) + "\n"


# --- json, json-lines, github ----------------------------------------------------------------


def _json(findings: list[Finding]) -> str:
    return json.dumps([f.as_dict() for f in findings], indent=2) + "\n"


def _json_lines(findings: list[Finding]) -> str:
    return _lines([json.dumps(f.as_dict()) for f in findings])


def _github(findings: list[Finding]) -> str:
    return _lines([_github_line(f) for f in findings])


def _github_line(finding: Finding) -> str:
    properties = {
        "title": f"{TOOL_NAME} ({finding.code})",
        "file": finding.filename,
        "line": finding.line,
        "col": finding.column,
        "endLine": finding.end_line,
        "endColumn": finding.end_column,
    }
    joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    return f"::error {joined}::{_escape_data(f'{finding.code} {finding.message}')}"


def _escape_data(text: str) -> str:
    # The escapes GitHub's own toolkit (@actions/core) applies to workflow command data.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# --- sarif -----------------------------------------------------------------------------------


def _sarif(findings: list[Finding]) -> str:
    rules = _sarif_rules()
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    run = {
        "tool": {"driver": {"name": TOOL_NAME, "version": __version__, "rules": rules}},
        # Our columns count code points; SARIF's default would be UTF-16 code units.
        "columnKind": "unicodeCodePoints",
        "results": [_sarif_result(f, rule_index) for f in findings],
    }
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def _sarif_rules() -> list[dict]:
    """Every rule, and BCL900, with its summary and the link to its page (code scanning shows
    them)."""
    # Loading the rules (for their summaries) needs libcst: only SARIF pays for it.
    from bcast_lint.codes import RULES
    from bcast_lint.docs import SYNTAX_ERROR_DOCUMENTATION
    from bcast_lint.rules.base import first_sentence_of_what_it_does

    described = [(spec.code, spec.name, spec.load().summary()) for spec in RULES]
    described.append((SYNTAX_ERROR, SYNTAX_ERROR_NAME,
                      first_sentence_of_what_it_does(SYNTAX_ERROR_DOCUMENTATION)))
    return [
        {
            "id": code,
            "name": name,
            "shortDescription": {"text": name},
            "fullDescription": {"text": summary},
            "helpUri": RULE_DOCS_URL.format(version=__version__, code=code),
        }
        for code, name, summary in described
    ]


def _sarif_result(finding: Finding, rule_index: dict[str, int]) -> dict:
    uri = _artifact_uri(finding.filename)
    region = _sarif_region(finding.line, finding.column, finding.end_line, finding.end_column)
    result = {
        "ruleId": finding.code,
        "level": "error",
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
    }
    if finding.code in rule_index:
        result["ruleIndex"] = rule_index[finding.code]
    # SARIF requires at least one replacement per change, so an edit-less fix cannot be expressed.
    if finding.fix is not None and finding.fix.edits:
        result["fixes"] = [_sarif_fix(finding.fix, uri)]
    return result


def _sarif_fix(fix: Fix, uri: str) -> dict:
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": uri},
                "replacements": [_sarif_replacement(edit) for edit in fix.edits],
            }
        ],
        "properties": {"applicability": fix.applicability},
    }


def _sarif_replacement(edit: Edit) -> dict:
    return {
        "deletedRegion": _sarif_region(edit.line, edit.column, edit.end_line, edit.end_column),
        "insertedContent": {"text": edit.content},
    }


def _sarif_region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _artifact_uri(filename: str) -> str:
    """A relative POSIX URI for paths under the working directory, a file: URI for others."""
    # Only SARIF needs these; keep them off the startup path of the text formats.
    from pathlib import Path
    from urllib.parse import quote

    if os.path.isabs(filename):
        relative = os.path.relpath(filename)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            return Path(filename).as_uri()
        filename = relative
    return quote(filename.replace(os.sep, "/"))


_MACHINE_FORMATS = {"json": _json, "json-lines": _json_lines, "github": _github, "sarif": _sarif}

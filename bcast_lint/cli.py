"""The `bcast-lint` command: lint paths, fix them, explain rules, verify programs.

Exit codes: 0 no findings, 1 findings (or files that could not be checked), 2 usage,
configuration or internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Optional, Sequence

from bcast_lint import __version__
from bcast_lint.codes import RULES, RULES_BY_CODE
from bcast_lint.config import ConfigError, Settings, load_settings
from bcast_lint.files import STDIN, SourceFile, discover
from bcast_lint.model import FileResult, Finding
from bcast_lint.output import FORMATS

if TYPE_CHECKING:
    from bcast_lint.runner import FileOutcome

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_SUBCOMMANDS = ("rule", "verify")


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "rule":
            return _rule_command(argv[1:])
        if argv and argv[0] == "verify":
            from bcast_lint.harness.command import main as verify

            return verify(argv[1:])
        return _check_command(argv[1:] if argv and argv[0] == "check" else argv)
    except ConfigError as error:
        print(f"bcast-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR


# -- check -------------------------------------------------------------------------------------
def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bcast-lint",
        description="Find broken tensor broadcasts in PyTorch distributed and Accelerate code.",
        epilog="Other commands: `bcast-lint rule CODE|--all` explains rules; "
               "`bcast-lint verify SCRIPT` runs a program on 2+ processes and compares ranks.",
    )
    parser.add_argument("paths", nargs="*", default=["."], help="files or directories; - reads stdin")
    parser.add_argument("--version", action="version", version=f"bcast-lint {__version__}")
    parser.add_argument("--config", help="use this configuration file instead of searching for one")
    selection = parser.add_argument_group("rule selection")
    selection.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable")
    selection.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to disable")
    selection.add_argument("--extend-select", type=_codes, help="codes to enable on top of the selection")
    selection.add_argument("--exclude", type=_codes, help="comma-separated globs replacing the excludes")
    selection.add_argument("--extend-exclude", type=_codes, help="globs to exclude on top")
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes and write the files")
    fixing.add_argument("--unsafe-fixes", action="store_true", default=None,
                        help="also apply fixes that may change behaviour")
    fixing.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false")
    fixing.add_argument("--diff", action="store_true",
                        help="print what --fix would change, write nothing (exit 1 when it would)")
    fixing.add_argument("--show-fixes", action="store_true", help="list each available or applied fix")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when anything was fixed, even if nothing remains")
    output = parser.add_argument_group("output")
    output.add_argument("--output-format", default="text", choices=FORMATS,
                        help="how to print findings (default: text)")
    output.add_argument("--statistics", action="store_true", help="count findings per code")
    output.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    output.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    output.add_argument("--stdin-filename", help="the path to report for code read from stdin")
    output.add_argument("--show-settings", action="store_true", help="print the resolved settings")
    output.add_argument("--add-noqa", action="store_true",
                        help="append `# noqa: CODE` to every line with a finding")
    speed = parser.add_argument_group("speed")
    speed.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    speed.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    speed.add_argument("--cache-dir", help="where to keep the cache (default: .bcast_lint_cache)")
    return parser


def _codes(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _check_command(argv: list[str]) -> int:
    args = _check_parser().parse_args(argv)
    settings = load_settings(args.paths, config_file=args.config, overrides={
        "select": args.select, "ignore": args.ignore, "extend_select": args.extend_select,
        "exclude": args.exclude, "extend_exclude": args.extend_exclude,
        "unsafe_fixes": args.unsafe_fixes,
    })
    if args.show_settings:
        print(_describe_settings(settings))
        return EXIT_CLEAN
    sources = list(discover(args.paths, settings))
    missing = [s for s in sources if s.error and not os.path.lexists(s.path)]
    outcomes = [_write(outcome, source, args) for source, outcome in zip(sources, _process(sources, settings, args))]
    status = _report(outcomes, args, settings)
    return max(status, EXIT_ERROR) if missing else status


def _mode(args) -> str:
    from bcast_lint import runner

    if args.diff:
        return runner.DIFF
    if args.fix:
        return runner.FIX
    return runner.ADD_NOQA if args.add_noqa else runner.LINT


def _process(sources: list[SourceFile], settings: Settings, args) -> list["FileOutcome"]:
    from bcast_lint.runner import FileOutcome, process_files

    readable = [(s.path, _display_name(s, args)) for s in sources if not s.error]
    cache = None
    if not args.no_cache:
        from bcast_lint.cache import Cache  # hashlib and tempfile take 6 ms to import

        cache = Cache(args.cache_dir or _default_cache_dir(settings))
    processed = iter(process_files(readable, settings, _mode(args), args.jobs, cache))
    return [FileOutcome(FileResult(_display_name(s, args), error=s.error)) if s.error else next(processed)
            for s in sources]


def _default_cache_dir(settings: Settings) -> str:
    from bcast_lint.cache import DEFAULT_DIRECTORY

    return os.path.join(settings.root or os.getcwd(), DEFAULT_DIRECTORY)


def _display_name(source: SourceFile, args) -> str:
    return args.stdin_filename if source.path == STDIN and args.stdin_filename else source.path


def _write(outcome: "FileOutcome", source: SourceFile, args) -> "FileOutcome":
    """Write what the outcome changes (the file, or a diff or the fixed source on stdout); the
    outcome as it then stands."""
    if source.path == STDIN and args.fix and not args.diff:
        # Editors replace the buffer with stdout: the whole source, changed or not (the report
        # goes to stderr).
        if outcome.original is not None:
            sys.stdout.buffer.write(outcome.new or outcome.original)
        return outcome
    if outcome.new is None:
        return outcome
    if args.diff:
        sys.stdout.flush()
        sys.stdout.buffer.write(_unified_diff(outcome.result.filename, outcome.original, outcome.new))
        return outcome
    if source.path == STDIN:
        return outcome  # --add-noqa has no file to write
    from bcast_lint.runner import FileOutcome
    from bcast_lint.writer import WriteError, write_if_unchanged

    try:
        write_if_unchanged(source.path, outcome.original, outcome.new)
    except WriteError as error:
        message = str(error) if args.fix else str(error).replace("not fixed", "no noqa added")
        unchanged = outcome.before or outcome.result  # the file still holds these
        return FileOutcome(FileResult(outcome.result.filename, unchanged.findings, error=message))
    return outcome


def _unified_diff(display: str, before: bytes, after: bytes) -> bytes:
    """The diff of the file's own bytes, each line with its own line ending."""
    import difflib

    from bcast_lint.source import Source

    name = os.fsencode(display)
    lines = difflib.diff_bytes(difflib.unified_diff, Source.from_bytes(before).byte_lines(),
                               Source.from_bytes(after).byte_lines(), name, name)
    return b"".join(line if line.endswith((b"\n", b"\r")) else line + b"\n\\ No newline at end of file\n"
                    for line in lines)


def _report(outcomes: list["FileOutcome"], args, settings: Settings) -> int:
    from bcast_lint import output

    results = [outcome.result for outcome in outcomes]
    fixed = [finding for outcome in outcomes for finding in outcome.fixed]
    errors = output.render_errors(results)
    if errors:
        sys.stderr.write(errors if errors.endswith("\n") else errors + "\n")
    if args.diff:
        return EXIT_FINDINGS if fixed else EXIT_CLEAN
    shown = output.render(results, args.output_format, show_fixes=args.show_fixes,
                          statistics=args.statistics, unsafe_fixes=settings.unsafe_fixes,
                          summary=not args.quiet)
    if fixed and args.output_format == "text" and not args.quiet:
        shown += _fixed_summary(fixed, args.show_fixes)
    # `--fix -` puts the fixed source on stdout, so the report goes to stderr.
    stream = sys.stderr if args.fix and not args.diff and STDIN in args.paths else sys.stdout
    if shown:
        stream.write(shown if shown.endswith("\n") else shown + "\n")
    remaining = any(result.findings for result in results)
    failed = any(result.error for result in results)
    if args.exit_zero:
        return EXIT_CLEAN
    if remaining or failed or (fixed and args.exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _fixed_summary(fixed: list[Finding], show_fixes: bool) -> str:
    lines = [f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}."]
    if show_fixes:
        lines += [f"  {f.filename}:{f.line}:{f.column}: {f.code} {f.fix.message}" for f in fixed]
    return "\n".join(lines) + "\n"


def _describe_settings(settings: Settings) -> str:
    lines = [f"Settings from: {settings.source or 'defaults (no configuration file found)'}"]
    for field in ("select", "extend_select", "ignore", "exclude", "extend_exclude",
                  "per_file_ignores", "unsafe_fixes", "respect_gitignore"):
        lines.append(f"  {field.replace('_', '-')} = {getattr(settings, field)!r}")
    lines.append(f"  enabled = {settings.selection()!r}")
    return "\n".join(lines)


# -- rule --------------------------------------------------------------------------------------
def _rule_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bcast-lint rule", description="Explain a rule.")
    parser.add_argument("code", nargs="?", help="a rule code, e.g. BCL001")
    parser.add_argument("--all", action="store_true", help="list every rule")
    args = parser.parse_args(argv)
    if args.all or not args.code:
        for spec in RULES:
            opt_in = "opt-in " if spec.opt_in else ""
            print(f"{spec.code}  {spec.name:34} {opt_in}{spec.load().summary()}")
        return EXIT_CLEAN
    spec = RULES_BY_CODE.get(args.code.upper())
    if spec is None:
        known = ", ".join(RULES_BY_CODE)
        print(f"bcast-lint: error: unknown rule {args.code!r} (known: {known})", file=sys.stderr)
        return EXIT_ERROR
    opt_in = "\n\nOpt-in: enabled only by selecting it by its full code." if spec.opt_in else ""
    print(f"# {spec.name} ({spec.code}){opt_in}\n\n{spec.load().documentation()}")
    return EXIT_CLEAN

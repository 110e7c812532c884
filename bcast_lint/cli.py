"""The `bcast-lint` command: lint paths, fix them, explain rules, verify programs.

Exit codes (`_exit_status` decides them; the README says the same): 0 no findings, 1 findings or
a path that could not be checked, 2 usage, configuration or internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Optional, Sequence

from bcast_lint import __version__
from bcast_lint.codes import ALL_CODES, RULES, RULES_BY_CODE, SYNTAX_ERROR, SYNTAX_ERROR_NAME
from bcast_lint.config import ConfigError, Settings, load_settings
from bcast_lint.files import STDIN, SourceFile, discover
from bcast_lint.model import FileResult, Finding
from bcast_lint.output import DEFAULT_FORMAT, FORMATS

if TYPE_CHECKING:
    from bcast_lint.runner import FileOutcome
    from bcast_lint.source import Source

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C
_SUBCOMMANDS = ("rule", "verify")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Every command runs here, so a closed pipe or Ctrl-C ends each of them the same way."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        status = _dispatch(argv)
        sys.stdout.flush()  # a closed pipe shows up here for output still in the buffer
        return status
    except ConfigError as error:
        print(f"bcast-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader (`| head`) has what it wanted. Like ruff (and ripgrep), stop quietly with
        # 0; point stdout at /dev/null so the interpreter's own flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_CLEAN
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "rule":
        return _rule_command(argv[1:])
    if argv and argv[0] == "verify":
        from bcast_lint.harness.command import main as verify

        return verify(argv[1:])
    return _check_command(argv[1:] if argv and argv[0] == "check" else argv)


# -- check -------------------------------------------------------------------------------------
def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bcast-lint",
        description="Find broken tensor broadcasts in PyTorch distributed and Accelerate code.",
        epilog="Other commands: `bcast-lint rule CODE|--all` explains rules; "
               "`bcast-lint verify SCRIPT` runs a program on 2+ processes and compares ranks.",
    )
    parser.add_argument("paths", nargs="*",
                        help="files or directories (default: ., or stdin with --stdin-filename); "
                             "- reads stdin")
    parser.add_argument("--version", action="version", version=f"bcast-lint {__version__}")
    parser.add_argument("--config", help="use this configuration file instead of searching for one")
    selection = parser.add_argument_group("rule selection")
    selection.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable")
    selection.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to disable")
    selection.add_argument("--extend-select", type=_codes, help="codes to enable on top of the selection")
    selection.add_argument("--exclude", type=_codes, help="comma-separated globs replacing the excludes")
    selection.add_argument("--extend-exclude", type=_codes, help="globs to exclude on top")
    selection.add_argument("--force-exclude", action="store_true", default=None,
                           help="apply the excludes to paths named on the command line too "
                                "(for pre-commit, which names every file)")
    selection.add_argument("--no-force-exclude", dest="force_exclude", action="store_false")
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
    output.add_argument("--output-format", default=DEFAULT_FORMAT, choices=FORMATS,
                        help="how to print findings: full shows the source line and the remedy, "
                             "concise (or text) one line each (default: full)")
    output.add_argument("--statistics", action="store_true", help="count findings per code")
    output.add_argument("--show-unresolved", action="store_true",
                        help="list the calls named like a collective that could not be resolved")
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
    if not args.paths:  # as ruff: code piped in with a name to report needs no "-"
        args.paths = [STDIN] if args.stdin_filename else ["."]
    settings = load_settings(args.paths, config_file=args.config, overrides={
        "select": args.select, "ignore": args.ignore, "extend_select": args.extend_select,
        "exclude": args.exclude, "extend_exclude": args.extend_exclude,
        "unsafe_fixes": args.unsafe_fixes, "force_exclude": args.force_exclude,
    })
    if args.show_settings:
        print(_describe_settings(settings))
        return EXIT_CLEAN
    sources = _without_excluded_stdin(list(discover(args.paths, settings)), settings, args)
    if not sources:
        print("warning: No Python files found under the given path(s)", file=sys.stderr)
    outcomes = [_write(outcome, source, args) for source, outcome in zip(sources, _process(sources, settings, args))]
    return _report(outcomes, args, settings)


def _without_excluded_stdin(sources: list[SourceFile], settings: Settings, args) -> list[SourceFile]:
    """As ruff: with force-exclude, code piped in under an excluded --stdin-filename is not
    linted, and `--fix -` hands it back unchanged to the editor that sent it."""
    if not (args.stdin_filename and settings.is_force_excluded(args.stdin_filename)):
        return sources
    if args.fix and not args.diff and any(source.path == STDIN for source in sources):
        from bcast_lint.runner import read_source

        sys.stdout.buffer.write(read_source(STDIN))
    return [source for source in sources if source.path != STDIN]


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
        sys.stderr.write(errors)
    if args.add_noqa:
        added = sum(outcome.noqa_added for outcome in outcomes if not outcome.result.error)
        if added and not args.quiet:  # ruff's wording; the findings are now silenced, not shown
            print(f"Added {added} noqa directive{'s' if added != 1 else ''}.", file=sys.stderr)
    elif args.diff:
        # The diff is on stdout; the summary goes to stderr so the diff can be applied as it is.
        if not args.quiet:
            sys.stderr.write(output.would_fix_summary(fixed, results, settings.unsafe_fixes))
    else:
        shown = output.render(results, args.output_format, show_fixes=args.show_fixes,
                              statistics=args.statistics, unsafe_fixes=settings.unsafe_fixes,
                              summary=not args.quiet, fixed=tuple(fixed),
                              source_line=_SourceLines(outcomes).line,
                              show_unresolved=args.show_unresolved)
        # `--fix -` puts the fixed source on stdout, so the report goes to stderr.
        (sys.stderr if args.fix and STDIN in args.paths else sys.stdout).write(shown)
    return _exit_status(results, fixed, args)


class _SourceLines:
    """The reported files' lines, for the full format: read once each, and only for files with
    findings. A file --fix wrote is read back, so the lines are those its findings are in."""

    def __init__(self, outcomes: list["FileOutcome"]) -> None:
        # stdin cannot be read twice: its outcome holds it (and, fixed, what --fix made of it).
        self._held = {o.result.filename: o.new or o.original for o in outcomes
                      if o.original is not None and not o.result.error}
        self._sources: dict[str, Optional[Source]] = {}

    def line(self, filename: str, number: int) -> Optional[str]:
        if filename not in self._sources:
            self._sources[filename] = self._read(filename)
        source = self._sources[filename]
        return source.line(number) if source is not None and 0 < number <= source.line_count else None

    def _read(self, filename: str) -> Optional[Source]:
        from bcast_lint.runner import read_source
        from bcast_lint.source import Source

        try:
            held = self._held.get(filename)
            return Source.from_bytes(held if held is not None else read_source(filename))
        except (OSError, SyntaxError, UnicodeDecodeError):
            return None


def _exit_status(results: list[FileResult], fixed: list[Finding], args) -> int:
    """The exit code of a check run, decided here only (the README's "Exit codes" says the same).

    0: nothing to report. 1: findings remain, a path could not be checked (missing, unreadable,
    undecodable, or not writable by --fix/--add-noqa), --diff would change something, or
    --exit-non-zero-on-fix and something was fixed. --exit-zero turns every 1 into 0. Usage,
    configuration and internal errors exit 2 before a run starts.
    """
    failed = any(result.error for result in results)
    if args.add_noqa:
        problem = failed  # the findings were just silenced
    elif args.diff:
        problem = failed or bool(fixed)
    else:
        remaining = any(result.findings for result in results)
        problem = failed or remaining or bool(fixed and args.exit_non_zero_on_fix)
    return EXIT_FINDINGS if problem and not args.exit_zero else EXIT_CLEAN


def _describe_settings(settings: Settings) -> str:
    lines = [f"Settings from: {settings.source or 'defaults (no configuration file found)'}"]
    for field in ("select", "extend_select", "ignore", "exclude", "extend_exclude",
                  "per_file_ignores", "unsafe_fixes", "respect_gitignore", "force_exclude"):
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
        from bcast_lint.docs import syntax_error_summary

        for spec in RULES:
            opt_in = "opt-in " if spec.opt_in else ""
            print(f"{spec.code}  {spec.name:34} {opt_in}{spec.load().summary()}")
        # Not a rule (nothing selects it), but reported like one, so listed with them.
        print(f"{SYNTAX_ERROR}  {SYNTAX_ERROR_NAME:34} {syntax_error_summary()}")
        return EXIT_CLEAN
    code = args.code.upper()
    if code == SYNTAX_ERROR:
        from bcast_lint.docs import SYNTAX_ERROR_DOCUMENTATION

        print(f"# {SYNTAX_ERROR_NAME} ({SYNTAX_ERROR})\n\n{SYNTAX_ERROR_DOCUMENTATION}", end="")
        return EXIT_CLEAN
    spec = RULES_BY_CODE.get(code)
    if spec is None:
        known = ", ".join(ALL_CODES)
        print(f"bcast-lint: error: unknown rule {args.code!r} (known: {known})", file=sys.stderr)
        return EXIT_ERROR
    opt_in = "\n\nOpt-in: enabled only by selecting it by its full code." if spec.opt_in else ""
    print(f"# {spec.name} ({spec.code}){opt_in}\n\n{spec.load().documentation()}")
    return EXIT_CLEAN

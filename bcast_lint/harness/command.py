"""The `bcast-lint verify` subcommand; the main CLI hands it the arguments after `verify`."""

from __future__ import annotations

import argparse
import json
import os
import sys

from bcast_lint.harness import verify
from bcast_lint.harness.launcher import MIN_PROCESSES
from bcast_lint.harness.report import render_text

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bcast-lint verify",
        usage="%(prog)s SCRIPT [--nproc N] [--timeout SECONDS] [--output-format {text,json}] [--check NAME] "
        "[-- ARGS...]",
        description="Run SCRIPT as a multi-process CPU job (torchrun, gloo) and report, per broadcast, "
        "whether every rank ended with the same value. Outcomes: ok, error, hang, divergent.",
    )
    parser.add_argument("script", help="the Python program to run")
    parser.add_argument("--nproc", type=int, default=2, help="number of processes (default 2, at least 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before the job is killed (default 60)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="NAME",
        help="a module-level name of the script whose value must agree across ranks at the end (repeatable)",
    )
    return parser


def main(argv: list[str]) -> int:
    """`verify SCRIPT [options] [-- script args]`: everything after `--` goes to the script untouched."""
    parser = build_parser()
    own, script_args = _split_at_double_dash(argv)
    try:
        args = parser.parse_args(own)
    except SystemExit as exit_:  # argparse exits 2 on usage errors, 0 for --help
        return EXIT_USAGE if exit_.code else EXIT_OK
    problem = _usage_problem(args)
    if problem:
        parser.print_usage(sys.stderr)
        print(f"bcast-lint verify: {problem}", file=sys.stderr)
        return EXIT_USAGE
    result = verify(args.script, args.nproc, args.timeout, tuple(script_args), tuple(args.check))
    if args.output_format == "json":
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(render_text(result, args.script))
    return EXIT_OK if result.ok else EXIT_PROBLEM


def _usage_problem(args: argparse.Namespace) -> str | None:
    if not os.path.isfile(args.script):
        return f"no such file: {args.script}"
    if args.nproc < MIN_PROCESSES:
        return f"--nproc must be at least {MIN_PROCESSES}: a broadcast needs a receiver"
    if args.timeout <= 0:
        return "--timeout must be positive"
    return None


def _split_at_double_dash(argv: list[str]) -> tuple[list[str], list[str]]:
    # argparse's REMAINDER would also swallow options written after SCRIPT, so split by hand.
    if "--" not in argv:
        return list(argv), []
    cut = argv.index("--")
    return list(argv[:cut]), list(argv[cut + 1 :])

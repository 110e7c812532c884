"""The `bcast-lint verify` subcommand; the main CLI hands it the arguments after `verify`.

Only the standard library is imported until the job starts, so `--help` and the one-line message
naming the `[harness]` extra work where torch, accelerate or psutil are not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import textwrap

from bcast_lint.harness.install import install_command
from bcast_lint.harness.protocol import MIN_PROCESSES

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2
HARNESS_MODULES = ("torch", "accelerate", "psutil")


def build_parser() -> argparse.ArgumentParser:
    description = textwrap.fill(
        "Lint SCRIPT, run it as a multi-process CPU job (torchrun, gloo) and report, per broadcast, whether every "
        "rank ended with the same value, tying each failure to the finding that predicted it. Outcomes: ok, error, "
        "hang, divergent, unverified (no collective ran).", width=88)
    parser = argparse.ArgumentParser(
        prog="bcast-lint verify",
        usage="%(prog)s SCRIPT [--fix [--unsafe-fixes]] [--nproc N[,N...]] [--nnodes N] [--timeout SECONDS] "
        "[--output-format {text,json}] [--check NAME] [-- ARGS...]",
        # The install command on a line of its own, unwrapped, so it can be copied as it is.
        description=f"{description}\n\nNeeds the harness extra (torch, accelerate, psutil):\n  {install_command()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("script", help="the Python program to run")
    parser.add_argument("--fix", action="store_true",
                        help="also apply the fixes to a temporary copy (never to SCRIPT), run it, and report per "
                             "finding whether the fixed copy is ok where the original failed")  # fmt: skip
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix, apply unsafe fixes too")
    parser.add_argument("--nproc", type=_sizes, default=(2,), metavar="N[,N...]",
                        help="processes per node (default 2; at least 2 in all); several, as 2,3, run the job "
                             "once per size and say which sizes fail: data that splits evenly over 2 ranks "
                             "may not over 3")  # fmt: skip
    parser.add_argument("--nnodes", type=int, default=1,
                        help="simulated nodes on this host (default 1): one launcher agent per node, one "
                             "rendezvous, so LOCAL_RANK and is_local_main_process behave as on N machines")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds before a job is killed (default 60; --fix runs two jobs)")  # fmt: skip
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
    missing = missing_harness_modules()
    if missing:
        print(f"bcast-lint verify: needs {', '.join(missing)}, not installed here; install the harness extra: "
              f"{install_command()}", file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    return _verify(args, tuple(script_args))


def missing_harness_modules() -> list[str]:
    """The harness extra's modules that cannot be imported (found without importing them)."""
    return [name for name in HARNESS_MODULES if importlib.util.find_spec(name) is None]


def _verify(args: argparse.Namespace, script_args: tuple[str, ...]) -> int:
    from bcast_lint.harness.verdict import RunOptions, WorldSizes, verify_fix, verify_script

    reports = []
    for nproc in args.nproc:
        options = RunOptions(nproc, args.nnodes, args.timeout, script_args, tuple(args.check))
        if args.fix:
            reports.append((nproc, verify_fix(args.script, options, args.unsafe_fixes)))
        else:
            reports.append((nproc, verify_script(args.script, options)))
    # One size reports as it always has; several are reported side by side.
    report = reports[0][1] if len(reports) == 1 else WorldSizes(args.nnodes, tuple(reports))
    if args.output_format == "json":
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(report.render_text())
    return EXIT_OK if report.ok else EXIT_PROBLEM


def _usage_problem(args: argparse.Namespace) -> str | None:
    if not os.path.isfile(args.script):
        return f"no such file: {args.script}"
    if args.nnodes < 1 or min(args.nproc) * args.nnodes < MIN_PROCESSES:
        return f"--nproc times --nnodes must be at least {MIN_PROCESSES}: a broadcast needs a receiver"
    if args.timeout <= 0:
        return "--timeout must be positive"
    if args.unsafe_fixes and not args.fix:
        return "--unsafe-fixes applies only with --fix"
    return None


def _sizes(text: str) -> tuple[int, ...]:
    """`2` or `2,3`: the processes per node of each run, in order, each once."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or N,N,...: {text!r}") from None
    if any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError(f"process counts must be positive: {text!r}")
    return tuple(dict.fromkeys(sizes))


def _split_at_double_dash(argv: list[str]) -> tuple[list[str], list[str]]:
    # argparse's REMAINDER would also swallow options written after SCRIPT, so split by hand.
    if "--" not in argv:
        return list(argv), []
    cut = argv.index("--")
    return list(argv[:cut]), list(argv[cut + 1 :])

"""Benchmark bcast-lint against ruff, flake8, TorchFix and Fixit on a pinned corpus (issue 7).

    python benchmarks/run.py [--corpus-dir benchmarks/.corpus] [--corpus benchmark|dense] [--rounds 3]
                             [--slice-every 40] [--tools bcast-lint,ruff,torchfix,flake8,fixit] [--smoke]

The corpus is six ML libraries as sdists (or, with `--corpus dense`, eight distributed-training
libraries), fetched once with `pip download` into the corpus directory. Every tool is given the
same explicit, sorted list of files (never a directory), so no tool's own exclude or .gitignore
rules change what is measured. Rounds are interleaved: each round runs every measurement once, so
drift on a shared machine hits all tools alike; the tables show medians. `--smoke` runs on a few
generated files in seconds; CI runs that.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python benchmarks/run.py` puts only benchmarks/ on the path
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.corpus import TINY_FILE, fetch_corpus, fetch_dense_corpus, synthetic_corpus  # noqa: E402
from benchmarks.report import count_prefiltered, find_prefilter, report  # noqa: E402
from benchmarks.timing import SCALING, plan, run_rounds  # noqa: E402
from benchmarks.tools import ALL_TOOLS, resolve_tools  # noqa: E402

__all__ = ["main"]

CORPORA = {"benchmark": fetch_corpus, "dense": fetch_dense_corpus}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus-dir", type=Path, default=REPO_ROOT / "benchmarks" / ".corpus")
    parser.add_argument("--corpus", choices=CORPORA, default="benchmark",
                        help="the six libraries (benchmark) or the eight distributed-training ones (dense)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slice-every", type=int, default=40)
    parser.add_argument("--tools", default=",".join(ALL_TOOLS))
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a few generated files, 1 round, install nothing; finishes in seconds",
    )
    parser.add_argument(
        "--no-install",
        action="store_true",
        help="do not create the TorchFix, Fixit and plugin-free flake8 venvs",
    )
    parser.add_argument(
        "--bcast-lint-cmd", help="command that runs bcast-lint (default: the installed one)"
    )
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds allowed for one run of one tool"
    )
    args = parser.parse_args(argv)
    unknown = set(args.tools.split(",")) - set(ALL_TOOLS)
    if unknown:
        parser.error(
            f"unknown tools: {', '.join(sorted(unknown))} (choose from {', '.join(ALL_TOOLS)})"
        )
    if args.smoke:
        args.rounds, args.slice_every, args.no_install = 1, 4, True
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bcast-bench-") as scratch:
        scratch_dir = Path(scratch)
        (scratch_dir / "tiny").mkdir()
        (scratch_dir / "tiny" / "tiny.py").write_text(TINY_FILE)
        (scratch_dir / "bcast-lint.toml").write_text("")
        if args.smoke:
            (scratch_dir / "corpus").mkdir()
            corpus = synthetic_corpus(scratch_dir / "corpus")
        else:
            corpus = CORPORA[args.corpus](args.corpus_dir.resolve())
        tools = resolve_tools(
            args.tools.split(","),
            args.corpus_dir.resolve(),
            not args.no_install,
            args.bcast_lint_cmd,
        )
        measurements = plan(tools, corpus, args.slice_every, scratch_dir)
        prefilter = find_prefilter() if "bcast-lint" in tools else None
        counts = {
            label: count_prefiltered(prefilter, corpus.root, corpus.files[::step])
            for step, label in SCALING
        }
        run_rounds(measurements, args.rounds, args.timeout)
        print(report(corpus, tools, measurements, counts, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

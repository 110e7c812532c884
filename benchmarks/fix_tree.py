"""`--fix --jobs 2` on a tree of copies of one fixture, against a plain lint of it (issue 12).

    python benchmarks/fix_tree.py [--copies 1000] [--fixture fixtures/BCL003/megatron_receiver.py] [--rounds 3]

Fixing goes through the same per-file pipeline as linting (runner.process_files), with --jobs and
the cache; a plain lint already re-lints each fixable file once to check its fixes, and --fix
reuses that attempt, so fixing costs no more than linting. The script times a plain lint and
`--fix` with `--jobs 2` (both `--no-cache`, each on a fresh copy of the tree), then `--fix --jobs 1`,
and checks that both fix runs leave the same bytes in every file, and that those are the
fixture's `.fixed.py`.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FIXTURE = REPO_ROOT / "fixtures" / "BCL003" / "megatron_receiver.py"


def make_tree(root: Path, fixture: Path, copies: int) -> None:
    data = fixture.read_bytes()
    for index in range(copies):
        directory = root / f"d{index // 100:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"copy_{index:04d}.py").write_bytes(data)


def run(tree: Path, jobs: int, *options: str) -> float:
    command = [sys.executable, "-m", "bcast_lint", "--config", str(tree / "empty.toml"), "--no-cache",
               "--jobs", str(jobs), "--quiet", *options, str(tree)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, cwd=tree)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def digest(tree: Path) -> dict[str, str]:
    return {str(path.relative_to(tree)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(tree.rglob("*.py"))}


def fresh(scratch: Path, name: str, fixture: Path, copies: int) -> Path:
    tree = scratch / name
    shutil.rmtree(tree, ignore_errors=True)
    make_tree(tree, fixture, copies)
    (tree / "empty.toml").write_text("")
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=1000)
    parser.add_argument("--fixture", type=Path, default=DEFAULT_FIXTURE)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    expected = args.fixture.with_name(args.fixture.stem + ".fixed.py").read_bytes()
    lint_times, fix_times = [], []
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        for round_index in range(args.rounds):  # interleaved, in turns, so a busy spell hits both alike
            runs = [(lint_times, "lint", ()), (fix_times, "fix2", ("--fix",))]
            for times, name, options in runs[round_index % 2:] + runs[:round_index % 2]:
                times.append(run(fresh(scratch, name, args.fixture, args.copies), 2, *options))
        two = digest(scratch / "fix2")
        one_time = run(fresh(scratch, "fix1", args.fixture, args.copies), 1, "--fix")
        one = digest(scratch / "fix1")
        fixed = {hashlib.sha256(expected).hexdigest()}
    lint, fix = statistics.median(lint_times), statistics.median(fix_times)
    print(f"{args.copies} copies of {args.fixture.relative_to(REPO_ROOT)}, median of {args.rounds} rounds")
    print(f"  plain lint --jobs 2   {lint:7.2f} s   (rounds: {', '.join(f'{t:.2f}' for t in lint_times)})")
    print(f"  --fix      --jobs 2   {fix:7.2f} s   (rounds: {', '.join(f'{t:.2f}' for t in fix_times)}; "
          f"{fix / lint:.2f} x the plain lint)")
    print(f"  --fix      --jobs 1   {one_time:7.2f} s   (one round)")
    same = one == two and set(two.values()) == fixed
    print(f"  same bytes with --jobs 1 and 2, and equal to the .fixed.py: {'yes' if same else 'NO'}")
    return 0 if same and fix <= lint * 1.1 else 1  # 10%: the noise of a shared machine


if __name__ == "__main__":
    sys.exit(main())

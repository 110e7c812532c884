"""How bcast-lint's cost grows with the code: one file of N functions, and a project of N files (issue 22).

    python benchmarks/scaling.py                          # functions 500..4,000 and files 50..400
    python benchmarks/scaling.py --functions 1000,4000,20000 --files 0 --rounds 1

Every function of the generated code has a rank test and a collective, in a handful of shapes that
real training code uses (a collective under `if rank == 0`, a broadcast of a value computed on rank 0,
an early return before a collective, a collective in a loop, an `accelerate` main-process test), so
every function is one the rules must read: no pre-filter or cut makes a size cheap. The project
sizes are files of 20 such functions that also call a helper module's collective under a rank test.

Each size runs `bcast-lint --no-cache --jobs 1 --output-format json` in a fresh process, which
reports its own CPU time (`time.process_time`) and peak RSS (`ru_maxrss`): CPU time, because the
machine this runs on is shared. Sizes within one round run one after another and rounds repeat the
whole series, so the ratios of one round are measured alike. The tables print the median CPU time,
the peak RSS, each size's cost per function, and its ratio to the size before; the targets are
`benchmarks/targets.py`'s SCALING_TARGETS.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python benchmarks/scaling.py` puts only benchmarks/ on the path
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.report import render  # noqa: E402
from benchmarks.targets import SCALING_TARGETS  # noqa: E402

HEADER = (
    "import torch\n"
    "import torch.distributed as dist\n"
    "from accelerate import Accelerator\n"
    "{imports}\n"
    "accelerator = Accelerator()\n"
)

# One function each; {k} makes every name unique. Each has a rank test and a collective.
SHAPES = (
    "def f{k}(x):\n"
    "    if dist.get_rank() == 0:\n"
    "        dist.all_reduce(x)\n",

    "def f{k}(x):\n"
    "    if dist.get_rank() == 0:\n"
    "        value = x * {k}\n"
    "    else:\n"
    "        value = torch.empty_like(x)\n"
    "    dist.broadcast(value, src=0)\n"
    "    return value\n",

    "def f{k}(x):\n"
    "    if dist.get_rank() != 0:\n"
    "        return x\n"
    "    total = x.sum()\n"
    "    dist.all_reduce(total)\n"
    "    return total\n",

    "def f{k}(batches):\n"
    "    rank = dist.get_rank()\n"
    "    for batch in batches:\n"
    "        if rank == 0:\n"
    "            batch = batch + {k}\n"
    "        dist.broadcast(batch, 0)\n"
    "    return batches\n",

    "def f{k}(model, x):\n"
    "    if accelerator.is_main_process:\n"
    "        state = accelerator.get_state_dict(model)\n"
    "        accelerator.save(state, 'f{k}.pt')\n"
    "    x = accelerator.reduce(x)\n"
    "    return x\n",

    "def f{k}(x):\n"
    "    result = None\n"
    "    if dist.get_rank() == 0:\n"
    "        result = x.clone()\n"
    "    dist.broadcast(result, src=0)\n"
    "    return result\n",
)

# In project files: a helper of another module that runs a collective, called under a rank test.
PROJECT_SHAPE = (
    "def g{k}(x):\n"
    "    if dist.get_rank() == 0:\n"
    "        helpers.synchronise(x)\n"
    "    return x\n"
)
HELPERS = "import torch.distributed as dist\n\n\ndef synchronise(x):\n    dist.all_reduce(x)\n    return x\n"
FUNCTIONS_PER_PROJECT_FILE = 20


def module_text(functions: int, start: int = 0, project: bool = False) -> str:
    """A module of `functions` functions, numbered from `start`, cycling through SHAPES."""
    parts = [HEADER.format(imports="from proj import helpers\n" if project else "")]
    for k in range(start, start + functions):
        parts.append("\n\n" + SHAPES[k % len(SHAPES)].format(k=k))
        if project and k % 2:
            parts.append("\n\n" + PROJECT_SHAPE.format(k=k))
    return "".join(parts)


def write_file(directory: Path, functions: int) -> list[Path]:
    path = directory / f"functions_{functions}.py"
    path.write_text(module_text(functions))
    return [path]


def write_project(directory: Path, files: int) -> list[Path]:
    """A package `proj` of `files` modules and the helper module they call."""
    package = directory / f"project_{files}" / "proj"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPERS)
    paths = [package / "helpers.py"]
    for index in range(files):
        path = package / f"mod_{index:04d}.py"
        path.write_text(module_text(FUNCTIONS_PER_PROJECT_FILE, index * FUNCTIONS_PER_PROJECT_FILE, project=True))
        paths.append(path)
    return paths


# The measured process: the CLI in-process, then its own CPU time and peak RSS on stderr's last line.
CHILD = """
import json, resource, sys, time
from bcast_lint.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exit:
    status = exit.code
cpu = time.process_time()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"status": status, "cpu": cpu, "peak_mb": peak}), file=sys.stderr)
"""


@dataclass
class Size:
    kind: str  # "functions" (in one file) or "files" (in one project)
    count: int
    paths: list[Path]
    lines: int
    cpu: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    findings: Optional[int] = None
    error: Optional[str] = None

    @property
    def median_cpu(self) -> Optional[float]:
        return statistics.median(self.cpu) if self.cpu and not self.error else None


def lint(size: Size, config: Path, timeout: float) -> None:
    command = [sys.executable, "-c", CHILD, "--config", str(config), "--no-cache", "--jobs", "1",
               "--output-format", "json", *map(str, size.paths)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=size.paths[0].parent)
    except subprocess.TimeoutExpired:
        size.error = f"over {timeout:.0f} s"
        return
    try:
        figures = json.loads(done.stderr.strip().splitlines()[-1])
    except (IndexError, ValueError):
        figures = {"status": done.returncode}
    if figures["status"] not in (0, 1) or "cpu" not in figures:
        size.error = f"exit {figures['status']}: {done.stderr[-300:]}"
        return
    size.cpu.append(figures["cpu"])
    size.peak_mb.append(figures["peak_mb"])
    size.findings = len(json.loads(done.stdout or "[]"))


def table(sizes: list[Size], unit: str) -> str:
    headers = [unit, "lines", "findings", "median CPU s", "ms / function", "x previous", "x size ratio",
               "peak RSS MB"]
    rows, previous = [], None
    for size in sizes:
        cpu = size.median_cpu
        functions = size.count * (1 if size.kind == "functions" else FUNCTIONS_PER_PROJECT_FILE * 3 // 2)
        growth = cpu / previous.median_cpu if cpu and previous and previous.median_cpu else None
        rows.append([
            f"{size.count:,}", f"{size.lines:,}", "" if size.findings is None else f"{size.findings:,}",
            size.error or f"{cpu:.3f}", f"{1000 * cpu / functions:.2f}" if cpu else "",
            f"{growth:.2f}x" if growth else "",
            f"{size.count / previous.count:.2f}x" if previous else "",
            f"{max(size.peak_mb):.0f}" if size.peak_mb and not size.error else "",
        ])
        previous = size
    return render(headers, rows)


def targets_table(sizes: list[Size]) -> str:
    by_count = {size.count: size for size in sizes if size.kind == "functions"}
    rows = []
    for target in SCALING_TARGETS:
        value = target.measure(by_count)
        verdict = "n/a" if value is None else ("PASS" if value <= target.limit else "FAIL")
        rows.append([target.label, "" if value is None else f"{value:,.2f}{target.unit}",
                     f"<= {target.limit:g}{target.unit}", verdict])
    return render(["target", "measured", "limit", "verdict"], rows)


def counts(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip() and int(part) > 0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", default="500,1000,2000,4000", help="functions in one file, per size")
    parser.add_argument("--files", default="50,100,200,400",
                        help=f"files of {FUNCTIONS_PER_PROJECT_FILE} functions in one project, per size (0: none)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds for one run of one size")
    parser.add_argument("--keep", type=Path, help="write the generated code here and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = args.keep or Path(scratch_name)
        scratch.mkdir(parents=True, exist_ok=True)
        config = scratch / "empty.toml"
        config.write_text("")
        sizes = [Size("functions", n, paths, 0) for n in counts(args.functions)
                 for paths in [write_file(scratch, n)]]
        sizes += [Size("files", n, paths, 0) for n in counts(args.files) for paths in [write_project(scratch, n)]]
        for size in sizes:
            size.lines = sum(path.read_text().count("\n") for path in size.paths)
        for round_index in range(args.rounds):
            for size in sizes:
                if not size.error:
                    print(f"round {round_index + 1}: {size.count} {size.kind}", file=sys.stderr)
                    lint(size, config, args.timeout)
    print(f"bcast-lint --no-cache --jobs 1, CPU time of the whole process, median of {args.rounds} rounds")
    for kind, unit in (("functions", "functions in one file"), ("files", "files in one project")):
        chosen = [size for size in sizes if size.kind == kind]
        if chosen:
            print(f"\n{table(chosen, unit)}")
    print(f"\n{targets_table(sizes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark bcast-lint against ruff, flake8, TorchFix and Fixit on a pinned corpus (issue 7).

    python benchmarks/run.py [--corpus-dir benchmarks/.corpus] [--rounds 3] [--slice-every 40]
                             [--tools bcast-lint,ruff,torchfix,flake8,fixit] [--smoke]

The corpus is six ML libraries as sdists, fetched once with `pip download` into the corpus
directory. Every tool is given the same explicit, sorted list of files (never a directory), so
no tool's own exclude or .gitignore rules change what is measured. Rounds are interleaved: each
round runs every measurement once, so drift on a shared machine hits all tools alike; the
tables show medians. `--smoke` runs on a few generated files in seconds; CI runs that.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = (
    ("transformers", "5.24.0"),
    ("accelerate", "1.15.0"),
    ("trl", "1.16.0"),
    ("diffusers", "0.42.1"),
    ("peft", "0.21.2"),
    ("deepspeed", "0.19.8"),
)
ALL_TOOLS = ("bcast-lint", "ruff", "torchfix", "flake8", "fixit")
# Installed into their own venvs: TorchFix pins libcst<1.6 and Fixit pins click<8.2, which
# would downgrade the project's own environment, and TorchFix registers a flake8 plugin
# that would distort the flake8 comparison.
TOOL_PINS = {"torchfix": "TorchFix==0.7.0", "fixit": "fixit==2.2.1"}
SCALING = ((8, "1/8"), (4, "1/4"), (2, "1/2"), (1, "all"))
TINY_FILE = "import os\n\nprint(os.getcwd())\n"
# Linters exit 1 when they report something; anything else is a failed run.
OK_EXIT_CODES = (0, 1)


@dataclass(frozen=True)
class Corpus:
    root: Path
    files: tuple[str, ...]  # sorted, relative to root
    lines: int
    description: str


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    cwd: Path
    env: dict = field(default_factory=dict, compare=False)  # added to os.environ


@dataclass(frozen=True)
class Sample:
    wall: float
    max_rss_mb: float
    error: str | None = None


@dataclass
class Measurement:
    name: str
    scope: str  # "corpus", "slice", "tiny" or a scaling label
    files: tuple[str, ...]
    jobs: str
    command: Command | None = None
    unavailable: str | None = None
    prime: Command | None = None  # run untimed before each sample (cache warm-up)
    samples: list[Sample] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return self.unavailable or next((s.error for s in self.samples if s.error), None)

    @property
    def wall(self) -> float | None:
        return (
            None
            if self.error or not self.samples
            else statistics.median(s.wall for s in self.samples)
        )

    @property
    def max_rss_mb(self) -> float | None:
        return None if self.error or not self.samples else max(s.max_rss_mb for s in self.samples)


@dataclass(frozen=True)
class Tool:
    """How to run one tool, or why it cannot run."""

    name: str
    prefix: tuple[str, ...] = ()
    env: dict = field(default_factory=dict)
    version: str = ""
    unavailable: str | None = None


# ---------------------------------------------------------------------------------------- corpus


def fetch_corpus(corpus_dir: Path) -> Corpus:
    sdists, src = corpus_dir / "sdist", corpus_dir / "src"
    files: list[str] = []
    for name, version in CORPUS:
        archive = find_sdist(sdists, name, version) or download_sdist(sdists, name, version)
        top = extract_sdist(archive, src)
        files += [
            path.relative_to(src).as_posix() for path in (src / top).rglob("*.py") if path.is_file()
        ]
    files.sort()
    description = " ".join(f"{name}=={version}" for name, version in CORPUS)
    return Corpus(src, tuple(files), count_lines(src, files), description)


def normalize(name: str) -> str:
    """Sdist file names spell a project name with "_" where the name may have "-" or "."."""
    return name.lower().replace("-", "_").replace(".", "_")


def find_sdist(sdists: Path, name: str, version: str) -> Path | None:
    for archive in sdists.glob("*.tar*"):
        found_name, _, found_version = archive.name.split(".tar")[0].rpartition("-")
        if normalize(found_name) == normalize(name) and found_version == version:
            return archive
    return None


def download_sdist(sdists: Path, name: str, version: str) -> Path:
    sdists.mkdir(parents=True, exist_ok=True)
    print(f"fetching {name}=={version} ...", file=sys.stderr)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{name}=={version}",
            "-d",
            str(sdists),
        ],
        check=True,
    )
    archive = find_sdist(sdists, name, version)
    if archive is None:
        raise SystemExit(f"pip download of {name}=={version} produced no .tar sdist in {sdists}")
    return archive


def extract_sdist(archive: Path, src: Path) -> str:
    """Extract once; a marker written after success makes an interrupted extraction start over."""
    marker = src / f".extracted-{archive.name}"
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        if not marker.exists():
            shutil.rmtree(src / top, ignore_errors=True)
            src.mkdir(parents=True, exist_ok=True)
            # The "data" filter refuses absolute paths, "..", links out of the tree and devices.
            tar.extractall(src, filter="data")
            marker.write_text(top)
    return top


def count_lines(root: Path, files: list[str]) -> int:
    """Also reads every file once, so the OS file cache is equally warm for every tool."""
    return sum((root / name).read_bytes().count(b"\n") for name in files)


def synthetic_corpus(root: Path) -> Corpus:
    """A few generated files, some with broadcasts and some without, for --smoke."""
    collective = (
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def sync(rank):\n    t = torch.zeros(4) if rank == 0 else None\n"
        "    dist.broadcast(t, src=0)\n    return t\n"
    )
    plain = "def add(a, b):\n    return a + b\n\n\nclass Box:\n    value = 1\n"
    files = []
    for index in range(24):
        name = f"pkg{index % 3}/mod_{index:02d}.py"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(collective if index % 3 == 0 else plain)
        files.append(name)
    files.sort()
    return Corpus(root, tuple(files), count_lines(root, files), "synthetic smoke corpus")


# ----------------------------------------------------------------------------------------- tools


def find_executable(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def version_of(prefix: tuple[str, ...], env: dict | None = None) -> str:
    try:
        out = subprocess.run(
            [*prefix, "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **(env or {})},
        )
    except OSError:
        return "?"
    return (
        (out.stdout.strip() or out.stderr.strip()).splitlines()[0] if out.returncode == 0 else "?"
    )


def resolve_bcast_lint(override: str | None) -> Tool:
    if override:
        prefix = tuple(shlex.split(override))
        return Tool("bcast-lint", prefix, version=version_of(prefix))
    env: dict = {}
    if executable := find_executable("bcast-lint"):
        prefix: tuple[str, ...] = (executable,)
    elif (REPO_ROOT / "bcast_lint" / "cli.py").exists():
        # Not installed: run the checkout, wherever the tool's working directory is.
        prefix, env = (sys.executable, "-m", "bcast_lint"), {"PYTHONPATH": str(REPO_ROOT)}
    else:
        return Tool("bcast-lint", unavailable="n/a (not installed)")
    return Tool("bcast-lint", prefix, env, version_of(prefix, env))


def resolve_ruff() -> Tool:
    executable = find_executable("ruff")
    if executable is None:
        return Tool("ruff", unavailable="n/a (not installed)")
    # ruff has no thread flag; rayon reads this.
    return Tool("ruff", (executable,), {"RAYON_NUM_THREADS": "1"}, version_of((executable,)))


def resolve_venv_tool(name: str, script: str, corpus_dir: Path, install: bool) -> Tool:
    venv = corpus_dir / "venvs" / name
    executable = venv / "bin" / script
    if not executable.exists() and install:
        reason = make_venv(venv, [TOOL_PINS[name]])
        if reason:
            return Tool(name, unavailable=f"n/a ({reason})")
    if not executable.exists():
        return Tool(name, unavailable="n/a (not installed)")
    return Tool(name, (str(executable),), version=version_of((str(executable),)))


def make_venv(venv: Path, requirements: list[str]) -> str | None:
    """Create (or update) a throwaway venv; returns why it failed, or None."""
    print(f"installing {' '.join(requirements)} into {venv} ...", file=sys.stderr)
    try:
        if not (venv / "bin" / "python").exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True
            )
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as error:
        last = (error.stderr or "").strip().splitlines()[-1:] or [f"exit {error.returncode}"]
        return f"install failed: {last[0][:80]}"
    return None


def flake8_plugin_installed() -> bool:
    return any(
        ep.name.startswith("BCL")
        for ep in importlib.metadata.entry_points(group="flake8.extension")
    )


def flake8_pins() -> list[str]:
    """flake8 and this environment's flake8 plugins but bcast-lint, at the same versions."""
    dists = {"flake8"}
    for group in ("flake8.extension", "flake8.report"):
        for ep in importlib.metadata.entry_points(group=group):
            if ep.dist is not None and not ep.name.startswith("BCL"):
                dists.add(ep.dist.name)
    for name in ("pyflakes", "pycodestyle", "mccabe"):
        dists.add(name)
    return sorted(f"{name}=={importlib.metadata.version(name)}" for name in dists)


def resolve_flake8(corpus_dir: Path, install: bool) -> tuple[Tool, Tool]:
    """flake8 here (with the bcast-lint plugin) and the same flake8 in a venv without it."""
    try:
        importlib.metadata.version("flake8")
    except importlib.metadata.PackageNotFoundError:
        missing = "n/a (not installed)"
        return Tool("flake8", unavailable=missing), Tool("flake8 no plugin", unavailable=missing)
    prefix = (sys.executable, "-m", "flake8")
    version = version_of(prefix)
    with_plugin = (
        Tool("flake8", prefix, version=version)
        if flake8_plugin_installed()
        else Tool("flake8", unavailable="n/a (BCL plugin not installed)")
    )
    plain = corpus_dir / "venvs" / "flake8-plain"
    reason = make_venv(plain, flake8_pins()) if install else None
    if reason or not (plain / "bin" / "python").exists():
        return with_plugin, Tool(
            "flake8 no plugin", unavailable=f"n/a ({reason or 'not installed'})"
        )
    plain_prefix = (str(plain / "bin" / "python"), "-m", "flake8")
    return with_plugin, Tool("flake8 no plugin", plain_prefix, version=version_of(plain_prefix))


def resolve_tools(
    selected: list[str], corpus_dir: Path, install: bool, bcast_lint_cmd: str | None
) -> dict:
    tools: dict[str, Tool] = {}
    if "bcast-lint" in selected:
        tools["bcast-lint"] = resolve_bcast_lint(bcast_lint_cmd)
    if "ruff" in selected:
        tools["ruff"] = resolve_ruff()
    if "flake8" in selected:
        tools["flake8"], tools["flake8 no plugin"] = resolve_flake8(corpus_dir, install)
    if "torchfix" in selected:
        tools["torchfix"] = resolve_venv_tool("torchfix", "torchfix", corpus_dir, install)
    if "fixit" in selected:
        tools["fixit"] = resolve_venv_tool("fixit", "fixit", corpus_dir, install)
    return tools


# ---------------------------------------------------------------------------------- measurements


def measure(
    tool: Tool, name: str, scope: str, files, args, jobs: str, cwd: Path, prime=False
) -> Measurement:
    if tool.unavailable:
        return Measurement(name, scope, tuple(files), jobs, unavailable=tool.unavailable)
    command = Command((*tool.prefix, *args, *files), cwd, tool.env)
    return Measurement(name, scope, tuple(files), jobs, command, prime=command if prime else None)


def plan(tools: dict, corpus: Corpus, slice_every: int, scratch: Path) -> list[Measurement]:
    """What to time. `scratch` holds tiny.py, an empty bcast-lint configuration and its cache."""
    everything, sliced, cpus = corpus.files, corpus.files[::slice_every], str(os.cpu_count())
    cwd, tiny_dir = corpus.root, scratch / "tiny"
    plan: list[Measurement] = []
    if bcast := tools.get("bcast-lint"):
        # An empty configuration, like ruff's --isolated: the corpus sits inside this repository,
        # whose pyproject.toml configures bcast-lint.
        isolated = ("--config", str(scratch / "bcast-lint.toml"))
        cold = (*isolated, "--no-cache", "--jobs", "1")
        warm = (*isolated, "--cache-dir", str(scratch / "cache"))
        plan += [
            measure(bcast, "bcast-lint", "corpus", everything, cold, "1", cwd),
            measure(
                bcast, "bcast-lint warm cache", "corpus", everything, warm, cpus, cwd, prime=True
            ),
            measure(bcast, "bcast-lint", "slice", sliced, cold, "1", cwd),
            measure(bcast, "bcast-lint", "tiny", ("tiny.py",), cold, "1", tiny_dir),
        ]
        plan += [
            measure(bcast, "bcast-lint", label, everything[::step], cold, "1", cwd)
            for step, label in SCALING
            if step != 1
        ]
    if ruff := tools.get("ruff"):
        args = ("check", "--isolated", "--no-cache", "--quiet")
        plan += [
            measure(ruff, "ruff", scope, files, args, "1", cwd)
            for scope, files in (("corpus", everything), ("slice", sliced))
        ]
        plan.append(measure(ruff, "ruff", "tiny", ("tiny.py",), args, "1", tiny_dir))
    for key in ("flake8", "flake8 no plugin"):
        if flake8 := tools.get(key):
            name = "flake8 --select BCL" + (" (no plugin)" if key != "flake8" else "")
            plan.append(
                measure(
                    flake8, name, "corpus", everything, ("--isolated", "--select", "BCL"), cpus, cwd
                )
            )
    if torchfix := tools.get("torchfix"):
        plan.append(measure(torchfix, "torchfix", "slice", sliced, ("--jobs", "1"), "1", cwd))
    if fixit := tools.get("fixit"):
        plan.append(measure(fixit, "fixit", "slice", sliced, ("lint",), cpus, cwd))
    return plan


def find_gnu_time() -> str | None:
    """GNU time, to read peak RSS: see run_once."""
    executable = shutil.which("time") or (
        "/usr/bin/time" if Path("/usr/bin/time").exists() else None
    )
    if executable is None:
        return None
    out = subprocess.run([executable, "--version"], check=False, capture_output=True, text=True)
    return executable if "GNU" in out.stdout + out.stderr else None


def run_once(command: Command, timeout: float, gnu_time: str | None) -> Sample:
    """Wall time and peak RSS (of the largest process) of one run.

    Linux charges a child the peak RSS of the process that spawned it (the memory it had at
    exec), so wait4's figure for a tool started from here is at least this script's own size.
    GNU time is a few hundred KB, so when it is there it reports RSS; the wall time is still
    taken here (GNU time adds a millisecond to it).
    """
    with tempfile.NamedTemporaryFile() as output, tempfile.NamedTemporaryFile(mode="r") as rss:
        argv = (gnu_time, "-f", "%M", "-o", rss.name, *command.argv) if gnu_time else command.argv
        start = time.perf_counter()
        process = subprocess.Popen(
            argv,
            cwd=command.cwd,
            env={**os.environ, **command.env},
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # Kill the whole group: the tool's workers, and the tool itself under GNU time.
        timer = threading.Timer(timeout, os.killpg, (process.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        rss_kb = int((rss.read().split() or ["0"])[-1]) if gnu_time else usage.ru_maxrss
        rss_mb = rss_kb / (2**20 if sys.platform == "darwin" and not gnu_time else 2**10)
        if process.returncode in OK_EXIT_CODES:
            return Sample(wall, rss_mb)
        if wall >= timeout:
            return Sample(wall, rss_mb, f"timed out after {timeout:g} s")
        output.seek(0)
        tail = output.read().decode(errors="replace").strip().splitlines()[-1:] or [""]
        return Sample(wall, rss_mb, f"error (exit {process.returncode}): {tail[0][:60]}")


def run_rounds(measurements: list[Measurement], rounds: int, timeout: float) -> None:
    gnu_time = find_gnu_time()
    runnable = [m for m in measurements if m.command]
    for round_index in range(rounds):
        # Rotate the order too, so no tool always runs right after the same neighbour.
        shift = round_index % max(len(runnable), 1)
        for measurement in runnable[shift:] + runnable[:shift]:
            if measurement.error:
                continue
            print(
                f"round {round_index + 1}/{rounds}: {measurement.name} ({measurement.scope}, "
                f"{len(measurement.files)} files)",
                file=sys.stderr,
            )
            primed = measurement.prime and run_once(measurement.prime, timeout, gnu_time)
            if primed and primed.error:
                # A failed warm-up leaves no cache: timing the next run would time a cold one.
                measurement.samples.append(Sample(0.0, 0.0, f"warm-up {primed.error}"))
                continue
            measurement.samples.append(run_once(measurement.command, timeout, gnu_time))


# --------------------------------------------------------------------------------------- reports


def find_prefilter():
    """bcast-lint's byte-level test of whether a file is worth parsing, if it has one."""
    sys.path.insert(0, str(REPO_ROOT))
    try:
        module = importlib.import_module("bcast_lint.prefilter")
    except ImportError:
        return None
    return getattr(module, "may_have_findings", None)


def count_prefiltered(prefilter, root: Path, files) -> int | None:
    if prefilter is None:
        return None
    try:
        return sum(bool(prefilter((root / name).read_bytes())) for name in files)
    except TypeError:  # a changed signature: leave the column out rather than fail the benchmark
        return None


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "" if value is None else f"{value:,.{digits}f}{suffix}"


def render(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]
    lines = [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
        for row in [headers, ["-" * w for w in widths], *rows]
    ]
    return "\n".join(lines)


def baseline(measurements: list[Measurement], name: str, scope: str) -> float | None:
    return next((m.wall for m in measurements if m.name == name and m.scope == scope), None)


def results_table(measurements: list[Measurement]) -> str:
    headers = [
        "tool",
        "scope",
        "files",
        "jobs",
        "median wall s",
        "files/s",
        "t / ruff",
        "TorchFix / t",
        "peak RSS MB",
    ]
    torchfix = baseline(measurements, "torchfix", "slice")
    rows = []
    for m in measurements:
        if m.scope not in ("corpus", "slice", "tiny"):
            continue
        if m.error:
            rows.append([m.name, m.scope, str(len(m.files)), m.jobs, m.error, "", "", "", ""])
            continue
        ruff = baseline(measurements, "ruff", m.scope)
        rows.append(
            [
                m.name,
                m.scope,
                str(len(m.files)),
                m.jobs,
                fmt(m.wall, 3),
                fmt(len(m.files) / m.wall, 0),
                fmt(m.wall / ruff, 2, "x") if ruff and m.name != "ruff" else "",
                fmt(torchfix / m.wall, 1, "x")
                if torchfix and m.scope == "slice" and m.name != "torchfix"
                else "",
                fmt(m.max_rss_mb, 0),
            ]
        )
    return render(headers, rows)


def scaling_rows(
    measurements: list[Measurement], counts: dict
) -> list[tuple[str, int, int | None, float | None]]:
    rows = []
    for step, label in SCALING:
        scope = "corpus" if step == 1 else label
        m = next((m for m in measurements if m.name == "bcast-lint" and m.scope == scope), None)
        if m is not None:
            rows.append((label, len(m.files), counts.get(label), m.wall))
    return rows


def linear_fit(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """Least squares t = a + b*n; also the largest relative distance of a point from the line."""
    if len(points) < 2 or len({n for n, _ in points}) < 2:
        return None
    mean_n = statistics.fmean(n for n, _ in points)
    mean_t = statistics.fmean(t for _, t in points)
    slope = sum((n - mean_n) * (t - mean_t) for n, t in points) / sum(
        (n - mean_n) ** 2 for n, _ in points
    )
    intercept = mean_t - slope * mean_n
    worst = max(abs(t - (intercept + slope * n)) / t for n, t in points)
    return intercept, slope, worst


def scaling_table(measurements: list[Measurement], counts: dict) -> tuple[str, tuple | None]:
    rows = scaling_rows(measurements, counts)
    if not rows:
        return "n/a (bcast-lint not run)", None
    with_prefilter = any(passed is not None for _, _, passed, _ in rows)
    headers = [
        "subset",
        "files",
        *(["pass prefilter"] if with_prefilter else []),
        "median wall s",
        "ms / passing file" if with_prefilter else "ms / file",
    ]
    table, points = [], []
    for label, files, passed, wall in rows:
        work = passed if with_prefilter else files
        if wall is not None and work:
            points.append((work, wall))
        cells = [label, str(files), *([str(passed)] if with_prefilter else [])]
        table.append([*cells, fmt(wall, 3) or "n/a", fmt(wall and work and 1000 * wall / work, 2)])
    fit = linear_fit(points)
    text = render(headers, table)
    if fit:
        per = "prefiltered file" if with_prefilter else "file"
        text += (
            f"\nlinear fit: {fit[0]:.3f} s + {1000 * fit[1]:.3f} ms per {per}; "
            f"largest distance of a point from the line: {100 * fit[2]:.1f}%"
        )
    return text, fit


def target_rows(measurements: list[Measurement], fit) -> list[list[str]]:
    def wall(name, scope):
        return baseline(measurements, name, scope)

    def check(label, value, limit, unit, higher_is_better=False):
        if value is None:
            return [label, "", f"{limit}{unit}", "n/a"]
        ok = value >= limit if higher_is_better else value <= limit
        return [
            label,
            f"{value:.3f}{unit}",
            f"{'>=' if higher_is_better else '<='} {limit}{unit}",
            "PASS" if ok else "FAIL",
        ]

    def ratio(a, b):
        return a / b if a is not None and b else None

    bcast_rss = [
        m.max_rss_mb for m in measurements if m.name.startswith("bcast-lint") and m.max_rss_mb
    ]
    return [
        check(
            "bcast-lint / ruff, corpus, 1 process",
            ratio(wall("bcast-lint", "corpus"), wall("ruff", "corpus")),
            2.5,
            "x",
        ),
        check(
            "TorchFix / bcast-lint, slice",
            ratio(wall("torchfix", "slice"), wall("bcast-lint", "slice")),
            200,
            "x",
            True,
        ),
        check(
            "bcast-lint --jobs, warm cache, corpus",
            wall("bcast-lint warm cache", "corpus"),
            1.0,
            " s",
        ),
        check("bcast-lint, tiny file", wall("bcast-lint", "tiny"), 0.120, " s"),
        check(
            "flake8 BCL / flake8 without plugin",
            ratio(
                wall("flake8 --select BCL", "corpus"),
                wall("flake8 --select BCL (no plugin)", "corpus"),
            ),
            1.1,
            "x",
        ),
        check("bcast-lint peak RSS (largest process)", max(bcast_rss, default=None), 300, " MB"),
        check("scaling: largest distance from a line", fit and 100 * fit[2], 10, "%"),
    ]


def report(corpus: Corpus, tools: dict, measurements, counts, args) -> str:
    sliced = len(corpus.files[:: args.slice_every])
    versions = ", ".join(f"{t.name}: {t.version or t.unavailable}" for t in tools.values())
    scaling, fit = scaling_table(measurements, counts)
    own_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    rss_source = (
        "GNU time, largest single process"
        if find_gnu_time()
        else f"wait4, so never below this script's own {own_mb:.0f} MB"
    )
    header = [
        f"bcast-lint benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"machine: {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs",
        f"load average at the end (1/5/15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        f"Python {platform.python_version()}, peak RSS from {rss_source}",
        f"corpus: {corpus.description} ({len(corpus.files):,} .py files, {corpus.lines:,} lines)",
        f"slice: 1 file in {args.slice_every} ({sliced} files), {args.rounds} interleaved round(s)",
        f"versions: {versions}",
    ]
    targets = render(["target", "measured", "limit", "verdict"], target_rows(measurements, fit))
    caption = "targets (issue 7; they hold for the pinned corpus only):"
    sections = [header, [results_table(measurements)], ["scaling (1 process, no cache):", scaling]]
    return "\n\n".join("\n".join(lines) for lines in [*sections, [caption, targets]])


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus-dir", type=Path, default=REPO_ROOT / "benchmarks" / ".corpus")
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
            corpus = fetch_corpus(args.corpus_dir.resolve())
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

"""What to time and how: the measurements planned for each tool, and interleaved rounds of runs
with wall time and peak RSS."""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.corpus import Corpus
from benchmarks.tools import Tool

SCALING = ((8, "1/8"), (4, "1/4"), (2, "1/2"), (1, "all"))
# Linters exit 1 when they report something; anything else is a failed run.
OK_EXIT_CODES = (0, 1)


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


def baseline(measurements: list[Measurement], name: str, scope: str) -> float | None:
    """The median wall time of one measurement, None when it did not run."""
    return next((m.wall for m in measurements if m.name == name and m.scope == scope), None)

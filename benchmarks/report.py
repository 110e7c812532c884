"""The report: the results table, the scaling table with its linear fit, and the targets."""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import resource
import statistics
import sys
from pathlib import Path

from benchmarks.corpus import Corpus
from benchmarks.targets import measured, targets_for
from benchmarks.timing import SCALING, Measurement, baseline, find_gnu_time

REPO_ROOT = Path(__file__).resolve().parent.parent


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
    rows = target_rows(targets_for(getattr(args, "corpus", "benchmark")), measurements, fit)
    targets = render(["target", "measured", "limit", "verdict"], rows)
    caption = "targets (issues 7, 13 and 22; they hold for the pinned corpus only):"
    sections = [header, [results_table(measurements)], ["scaling (1 process, no cache):", scaling]]
    return "\n\n".join("\n".join(lines) for lines in [*sections, [caption, targets]])


def target_rows(targets, measurements: list[Measurement], fit) -> list[list[str]]:
    rows = []
    for target in targets:
        value, limit = measured(target, measurements, fit), f"{target.limit}{target.unit}"
        if value is None:
            rows.append([target.label, "", limit, "n/a"])
            continue
        ok = value >= target.limit if target.higher_is_better else value <= target.limit
        comparison = ">=" if target.higher_is_better else "<="
        rows.append([target.label, f"{value:.3f}{target.unit}", f"{comparison} {limit}", "PASS" if ok else "FAIL"])
    return rows

"""Lint the pinned real-world corpus (issues 8, 13, 14) and print every finding with its source line.

    python scripts/lint_real_world.py [--corpus-dir benchmarks/.corpus] [--check-docs docs/real-world.md]
                                      [--coverage]

The corpus is the benchmarks' six libraries (benchmarks/run.py: accelerate, transformers, trl,
peft, diffusers and deepspeed sdists at pinned versions) plus the eleven of `EXTRA_LIBRARIES`
below, whose distributed code goes through their own wrappers; all are fetched with pip on first
use into the git-ignored corpus directory. The extra ones are not part of the benchmark corpus, so
the benchmark figures stay comparable across sessions. The CLI lints each project's directory
with an empty configuration (this repository's pyproject.toml excludes the corpus) and JSON output.

`--coverage` prints, per library, a Markdown table row of how much of its distributed code the
analysis reads (issue 13): its Python files, those passing the pre-filter, the collective calls
analysed (calls of the library's own collective-running helpers included) and the calls named
like a collective that could not be resolved, from `--statistics --output-format json`.

Exit status: 0 when every file was linted without an internal error; 1 when bcast-lint crashed,
exited 2, or could not check a file; with --check-docs, also 1 when a finding is missing from
that document or the document lists a finding no longer reported. Each finding is identified in
the document by `project/path:line CODE` (the project without its version).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bcast_lint.codes import OPT_IN_CODES

REPO_ROOT = Path(__file__).resolve().parent.parent
_DOC_ENTRY = re.compile(r"`(?P<key>[\w.-]+/[^`\s]+:\d+ BCL\d{3})`")


@dataclass(frozen=True)
class Finding:
    project: str  # e.g. "accelerate", without the version
    path: str  # inside the project's directory
    line: int
    column: int
    code: str
    message: str
    source_line: str

    @property
    def key(self) -> str:
        return f"{self.project}/{self.path}:{self.line} {self.code}"


def load_benchmarks():
    spec = importlib.util.spec_from_file_location("bcast_benchmarks", REPO_ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


# Whatever `pip download --no-deps NAME==VERSION` serves: a wheel (it holds the sources) or an sdist.
EXTRA_LIBRARIES = (
    ("megatron-core", "0.16.1"),
    ("verl", "0.9.1"),
    ("axolotl", "0.19.0"),
    ("colossalai", "0.5.0"),
    ("torchtune", "0.6.1"),
    ("mosaicml", "0.32.1"),
    ("lightning", "2.6.6"),
    ("fairscale", "0.4.13"),
    # issue 21: frameworks whose collectives the framework map covers
    ("torchmetrics", "1.9.0"),
    ("pytorch-ignite", "0.5.5"),
    ("mmengine", "0.10.7"),
)


def project_directories(corpus_dir: Path) -> list[Path]:
    benchmarks = load_benchmarks()
    corpus = benchmarks.fetch_corpus(corpus_dir)
    benchmark_projects = {corpus.root / name.split("/", 1)[0] for name in corpus.files}
    extra = {fetch_library(corpus_dir, name, version) for name, version in EXTRA_LIBRARIES}
    return sorted(benchmark_projects | extra)


def fetch_library(corpus_dir: Path, name: str, version: str) -> Path:
    """`corpus_dir/src/NAME-VERSION`, downloaded and extracted on first use."""
    target = corpus_dir / "src" / f"{name}-{version}"
    marker = corpus_dir / "src" / f".extracted-{name}-{version}"
    if marker.exists():
        return target
    downloads = corpus_dir / "dist" / f"{name}-{version}"
    if not any(downloads.glob("*")):
        print(f"fetching {name}=={version} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        f"{name}=={version}", "-d", str(downloads)], check=True)
    archive = next(downloads.glob("*"))
    shutil.rmtree(target, ignore_errors=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            wheel.extractall(target)
    else:
        with tarfile.open(archive) as tar:
            # The "data" filter refuses absolute paths, "..", links out of the tree and devices;
            # an sdist holds one NAME-VERSION/ folder, which becomes `target` itself.
            tar.extractall(target.parent, filter="data")
    marker.write_text(archive.name)
    return target


def lint(directories: list[Path]) -> tuple[list[dict], str, int]:
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "bcast-lint.toml"
        empty.write_text("")
        # The opt-in codes too: their findings get verdicts, counted apart from the default ones.
        opt_in = [f"--extend-select={code}" for code in sorted(OPT_IN_CODES)]
        command = [sys.executable, "-m", "bcast_lint", "--config", str(empty), "--no-cache", *opt_in,
                   "--output-format", "json", "--exit-zero", *map(str, directories)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT)
    findings = json.loads(done.stdout) if done.stdout.strip() else []
    return findings, done.stderr, done.returncode


def describe(raw: dict, directories: list[Path]) -> Finding:
    path = Path(raw["filename"]).resolve()
    top = next(d for d in directories if path.is_relative_to(d.resolve()))
    project = top.name.rsplit("-", 1)[0]
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    source_line = lines[raw["line"] - 1].strip() if raw["line"] <= len(lines) else ""
    return Finding(project, path.relative_to(top.resolve()).as_posix(), raw["line"], raw["column"],
                   raw["code"], raw["message"], source_line)


def documented_keys(document: Path) -> set[str]:
    return {match["key"] for match in _DOC_ENTRY.finditer(document.read_text())}


@dataclass(frozen=True)
class Coverage:
    project: str
    files: int
    parsed: int  # pass the pre-filter (with its second chance: an imported collective helper)
    analysed: int
    unresolved: int

    def row(self) -> str:
        return f"| {self.project} | {self.files:,} | {self.parsed:,} | {self.analysed:,} | {self.unresolved:,} |"


def coverage(directory: Path) -> Coverage:
    from bcast_lint.analysis.project import Project
    from bcast_lint.engine import worth_parsing

    project = Project()
    files = sorted(directory.rglob("*.py"))
    parsed = sum(1 for path in files if worth_parsing(path.read_bytes(), str(path), project))
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "bcast-lint.toml"
        empty.write_text("")
        command = [sys.executable, "-m", "bcast_lint", "--config", str(empty), "--no-cache", "--statistics",
                   "--output-format", "json", "--exit-zero", str(directory)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT)
    report = json.loads(done.stdout)
    return Coverage(directory.name.rsplit("-", 1)[0], len(files), parsed,
                    report["collective_calls_analysed"], len(report["unresolved"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-dir", type=Path, default=REPO_ROOT / "benchmarks" / ".corpus")
    parser.add_argument("--check-docs", type=Path, help="fail unless this file lists exactly the findings")
    parser.add_argument("--coverage", action="store_true", help="print the coverage table per library")
    args = parser.parse_args(argv)

    directories = project_directories(args.corpus_dir)
    if args.coverage:
        print("| project | files | pass the pre-filter | collective calls analysed | unresolved |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for directory in directories:
            print(coverage(directory).row(), flush=True)
        return 0
    started = time.monotonic()
    raw_findings, errors, status = lint(directories)
    elapsed = time.monotonic() - started
    findings = sorted((describe(raw, directories) for raw in raw_findings),
                      key=lambda f: (f.project, f.path, f.line))
    for f in findings:
        print(f"{f.project}/{f.path}:{f.line}:{f.column}: {f.code} {f.message}\n    {f.source_line}")
    print(f"{len(findings)} findings in {len(directories)} projects, linted in {elapsed:.0f}s",
          file=sys.stderr)

    failed = status != 0 or bool(errors.strip())
    if failed:
        print(f"bcast-lint exited {status}; stderr:\n{errors}", file=sys.stderr)
    if args.check_docs:
        documented = documented_keys(args.check_docs)
        reported = {finding.key for finding in findings}
        for key in sorted(reported - documented):
            print(f"not in {args.check_docs}: {key}", file=sys.stderr)
        for key in sorted(documented - reported):
            print(f"in {args.check_docs} but no longer reported: {key}", file=sys.stderr)
        failed |= reported != documented
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Lint the pinned real-world corpus (issues 8, 13, 14) and print every finding with its source line.

    python scripts/lint_real_world.py [--corpus-dir benchmarks/.corpus] [--check-docs docs/real-world.md]
                                      [--coverage]

The corpus is the benchmarks' six libraries (benchmarks/corpus.py: accelerate, transformers, trl,
peft, diffusers and deepspeed sdists at pinned versions) plus the eleven of `EXTRA_LIBRARIES`
below: the benchmarks' dense corpus, whose distributed code goes through their own wrappers, and
three frameworks; all are fetched with pip on first use into the git-ignored corpus directory. The
CLI lints each project's directory with an empty configuration (this repository's pyproject.toml
excludes the corpus) and JSON output.

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
import json
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # `python scripts/lint_real_world.py` puts only scripts/ on the path
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks.corpus import DENSE_CORPUS, fetch_corpus, fetch_library  # noqa: E402
from bcast_lint.codes import OPT_IN_CODES  # noqa: E402

__all__ = ["fetch_library"]  # scripts/generate_framework_map.py fetches the frameworks' sources with it
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


# The benchmarks' dense corpus (eight libraries whose distributed code goes through their own
# wrappers), and the frameworks the framework map covers (issue 21).
EXTRA_LIBRARIES = (
    *DENSE_CORPUS,
    ("torchmetrics", "1.9.0"),
    ("pytorch-ignite", "0.5.5"),
    ("mmengine", "0.10.7"),
)


def project_directories(corpus_dir: Path) -> list[Path]:
    corpus = fetch_corpus(corpus_dir)
    benchmark_projects = {corpus.root / name.split("/", 1)[0] for name in corpus.files}
    extra = {fetch_library(corpus_dir, name, version) for name, version in EXTRA_LIBRARIES}
    return sorted(benchmark_projects | extra)


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

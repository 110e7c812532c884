"""The benchmark script works: `--smoke` on its generated files prints every table.

This times nothing against a limit; the targets are measured by running benchmarks/run.py on the
pinned corpus (see benchmarks/README.md).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"
HEADER = re.compile(r"^tool\s+scope\s+files\s+jobs\s+median wall s\s+files/s", re.MULTILINE)
BCAST_LINT_SCOPES = ("corpus", "slice", "tiny")


def smoke(*arguments: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(RUN), "--smoke", *arguments],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def timed_row(output: str, name: str, scope: str) -> re.Match | None:
    """A results row of `name` on `scope` whose median wall time is a number."""
    pattern = rf"^{re.escape(name)}\s+{scope}\s+\d+\s+\d+\s+(\d+\.\d+)\s+[\d,]+"
    return re.search(pattern, output, re.MULTILINE)


@pytest.fixture
def stand_in(tmp_path: Path) -> str:
    """A bcast-lint that accepts any arguments and finds nothing, to test the script alone."""
    script = tmp_path / "stand_in.py"
    script.write_text(
        "import sys\nprint('bcast-lint stand-in') if '--version' in sys.argv else None\n"
    )
    return shlex.join([sys.executable, str(script)])


@pytest.mark.skipif(
    shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
    reason="ruff is not installed",
)
def test_smoke_times_bcast_lint_and_ruff():
    output = smoke("--tools", "bcast-lint,ruff")
    assert HEADER.search(output), output
    for scope in BCAST_LINT_SCOPES:
        assert timed_row(output, "bcast-lint", scope), output
        assert timed_row(output, "ruff", scope), output
    assert timed_row(output, "bcast-lint warm cache", "corpus"), output


def test_scaling_and_targets_tables(stand_in: str):
    output = smoke("--tools", "bcast-lint", "--bcast-lint-cmd", stand_in)
    for subset in ("1/8", "1/4", "1/2", "all"):
        assert re.search(rf"^{re.escape(subset)}\s+\d+\s+.*\d+\.\d+", output, re.MULTILINE), output
    assert "linear fit:" in output
    assert re.search(
        r"^bcast-lint, tiny file\s+\d+\.\d+ s\s+<= 0\.12 s\s+(PASS|FAIL)", output, re.MULTILINE
    )


def test_the_dense_corpus_has_its_own_targets(stand_in: str):
    output = smoke("--tools", "bcast-lint", "--bcast-lint-cmd", stand_in, "--corpus", "dense")
    assert re.search(r"^bcast-lint / ruff, dense corpus, 1 process\s.*8\.0x\s", output, re.MULTILINE), output
    assert "bcast-lint, tiny file" not in output.split("targets (")[1]


def test_missing_tools_are_reported_not_fatal(stand_in: str, tmp_path: Path):
    # --smoke installs nothing, and no TorchFix or Fixit venv exists under an empty corpus dir.
    output = smoke(
        "--tools",
        "bcast-lint,torchfix,fixit",
        "--bcast-lint-cmd",
        stand_in,
        "--corpus-dir",
        str(tmp_path / "corpus"),
    )
    assert re.search(
        r"^torchfix\s+slice\s+\d+\s+1\s+n/a \(not installed\)", output, re.MULTILINE
    ), output
    assert re.search(r"^fixit\s+slice\s+\d+\s+\d+\s+n/a \(not installed\)", output, re.MULTILINE), (
        output
    )
    assert timed_row(output, "bcast-lint", "slice"), output


def test_failing_tool_is_reported(tmp_path: Path):
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nprint('boom')\nsys.exit(0 if '--version' in sys.argv else 3)\n")
    output = smoke(
        "--tools", "bcast-lint", "--bcast-lint-cmd", shlex.join([sys.executable, str(failing)])
    )
    assert re.search(
        r"^bcast-lint\s+corpus\s+\d+\s+1\s+error \(exit 3\): boom", output, re.MULTILINE
    ), output


def test_scaling_prints_a_row_per_size_with_findings_and_the_targets():
    """benchmarks/scaling.py on tiny sizes: every size linted (findings counted, a CPU time and a
    peak RSS), and the target rows printed."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "scaling.py"
    completed = subprocess.run([sys.executable, str(script), "--functions", "6,12", "--files", "2", "--rounds", "1"],
                               capture_output=True, text=True, timeout=240, check=False)
    assert completed.returncode == 0, completed.stderr
    rows = re.findall(r"^(\d+)\s+[\d,]+\s+(\d+)\s+(\d+\.\d+)\s+[\d.]+\s+.*?(\d+)$", completed.stdout, re.MULTILINE)
    assert [row[0] for row in rows] == ["6", "12", "2"], completed.stdout
    assert all(int(findings) > 0 for _, findings, _, _ in rows), completed.stdout
    assert "4,000 functions / 1,000 functions, CPU time" in completed.stdout

"""The README's first Quick start command works as written in a fresh clone: it makes its own
virtual environment (a system Python may refuse installs, PEP 668), installs, and lints."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "fixtures" / "BCL003" / "unfilled_source.py"

pytestmark = [pytest.mark.timeout(600), pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", section, re.S)


def test_both_quick_start_commands_make_their_own_virtual_environment():
    commands = _quick_start_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install ")


@pytest.mark.slow
@pytest.mark.network  # pip installs the clone and its dependencies
def test_the_install_and_lint_command_works_in_a_fresh_clone(tmp_path):
    if subprocess.run(["git", "status", "--porcelain", "--", "bcast_lint", "pyproject.toml"], cwd=ROOT,
                      capture_output=True, text=True).stdout.strip():
        pytest.skip("a clone holds the committed tree; commit the package first")
    clone = tmp_path / "bcast-lint"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    shutil.copy(BROKEN, tmp_path / "train.py")
    command = _quick_start_commands()[0].replace("path/to/your/code", str(tmp_path / "train.py"))
    result = subprocess.run(["bash", "-c", command], cwd=clone, capture_output=True, text=True, timeout=540)
    assert result.returncode == 1, result.stdout + result.stderr  # installed, ran, found the bug
    assert "train.py:" in result.stdout and "BCL003" in result.stdout

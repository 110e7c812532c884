"""pre-commit runs the hooks from this checkout, and flake8 with the plugin as an additional
dependency: both fail on a broken file and pass on its fixed version."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROKEN = (ROOT / "fixtures" / "BCL003" / "megatron_receiver.py").read_text()
FIXED = (ROOT / "fixtures" / "BCL003" / "megatron_receiver.fixed.py").read_text()

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _head_commit() -> str:
    if _git("status", "--porcelain", "--", "bcast_lint", "pyproject.toml", ".pre-commit-hooks.yaml",
            cwd=ROOT).strip():
        pytest.skip("pre-commit installs the committed tree; commit the package first")
    return _git("rev-parse", "HEAD", cwd=ROOT).strip()


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    _git("config", "user.email", "ci@example.invalid", cwd=repo)
    _git("config", "user.name", "ci", cwd=repo)
    return repo


def _pre_commit(repo: Path, home: Path, config: str) -> subprocess.CompletedProcess:
    (repo / ".pre-commit-config.yaml").write_text(config)
    _git("add", "-A", cwd=repo)
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo,
                          env=environment, capture_output=True, text=True, timeout=540)


def test_hook_from_this_repository(user_repo, tmp_path):
    config = f"repos:\n- repo: {ROOT}\n  rev: {_head_commit()}\n  hooks:\n  - id: bcast-lint\n"
    (user_repo / "train.py").write_text(BROKEN)
    failed = _pre_commit(user_repo, tmp_path / "home", config)
    assert failed.returncode == 1 and "BCL003" in failed.stdout, failed.stdout + failed.stderr
    (user_repo / "train.py").write_text(FIXED)
    passed = _pre_commit(user_repo, tmp_path / "home", config)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def test_flake8_route_with_additional_dependency(user_repo, tmp_path):
    _head_commit()
    config = (
        "repos:\n- repo: local\n  hooks:\n  - id: flake8\n    name: flake8\n"
        "    entry: flake8 --select BCL\n    language: python\n    types: [python]\n"
        f"    additional_dependencies: [flake8, 'bcast-lint @ git+file://{ROOT}']\n"
    )
    (user_repo / "train.py").write_text(BROKEN)
    failed = _pre_commit(user_repo, tmp_path / "home", config)
    assert failed.returncode == 1 and "BCL003" in failed.stdout, failed.stdout + failed.stderr
    (user_repo / "train.py").write_text(FIXED)
    passed = _pre_commit(user_repo, tmp_path / "home", config)
    assert passed.returncode == 0, passed.stdout + passed.stderr

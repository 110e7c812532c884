"""The README's pre-commit configuration works as written: pre-commit runs this checkout's hooks,
and flake8 with the plugin as an additional dependency. Each fails on a broken file and passes on
its fixed version, and the hooks leave out what `extend-exclude` excludes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import bcast_lint
from bcast_lint.output import REPOSITORY_URL

ROOT = Path(__file__).resolve().parent.parent
BROKEN = (ROOT / "fixtures" / "BCL003" / "unfilled_source.py").read_text()
FIXED = (ROOT / "fixtures" / "BCL003" / "unfilled_source.fixed.py").read_text()
README_BLOCK = re.compile(r"<!-- pre-commit-config:start.*?-->\n```yaml\n(.*?)```\n<!-- pre-commit-config:end -->",
                          re.S)

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


def _readme_config() -> str:
    match = README_BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match, "README.md lost its pre-commit block"
    return match.group(1)


def test_readme_names_this_release_and_every_hook():
    text = _readme_config()
    ours, flake8 = yaml.safe_load(text)["repos"]
    assert ours["repo"] == REPOSITORY_URL and ours["rev"] == f"v{bcast_lint.__version__}"
    declared = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert declared == {"bcast-lint", "bcast-lint-fix"}
    assert "      - id: bcast-lint\n" in text and "# - id: bcast-lint-fix " in text
    assert f"bcast-lint @ git+{REPOSITORY_URL}@v{bcast_lint.__version__}" in flake8["hooks"][0][
        "additional_dependencies"]


def test_both_hooks_force_the_excludes():
    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()):
        assert "--force-exclude" in hook["entry"].split(), hook["id"]


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


def _pre_commit(repo: Path, home: Path, repos: list[dict]) -> subprocess.CompletedProcess:
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": repos}))
    _git("add", "-A", cwd=repo)
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo,
                          env=environment, capture_output=True, text=True, timeout=540)


@pytest.mark.slow
@pytest.mark.network  # pre-commit installs each hook's environment with pip
def test_readme_hooks_from_this_repository(user_repo, tmp_path):
    ours = yaml.safe_load(_readme_config())["repos"][0]
    ours.update(repo=str(ROOT), rev=_head_commit())  # this checkout stands in for the release
    (user_repo / "pyproject.toml").write_text('[tool.bcast-lint]\nextend-exclude = ["third_party"]\n')
    (user_repo / "third_party").mkdir()
    (user_repo / "third_party" / "vendored.py").write_text(BROKEN)  # excluded: never reported
    (user_repo / "train.py").write_text(BROKEN)
    home = tmp_path / "home"
    failed = _pre_commit(user_repo, home, [ours])
    assert failed.returncode == 1 and "train.py:" in failed.stdout, failed.stdout + failed.stderr
    assert "third_party" not in failed.stdout
    (user_repo / "train.py").write_text(FIXED)
    passed = _pre_commit(user_repo, home, [ours])
    assert passed.returncode == 0, passed.stdout + passed.stderr

    # The fix hook (commented out in the README) fixes the file and fails once, then passes.
    fixing = {**ours, "hooks": [{"id": "bcast-lint-fix"}]}
    (user_repo / "train.py").write_text(BROKEN)
    changed = _pre_commit(user_repo, home, [fixing])
    assert changed.returncode == 1 and (user_repo / "train.py").read_text() == FIXED, changed.stdout
    assert (user_repo / "third_party" / "vendored.py").read_text() == BROKEN
    assert _pre_commit(user_repo, home, [fixing]).returncode == 0


@pytest.mark.slow
@pytest.mark.network  # pre-commit installs each hook's environment with pip
def test_readme_flake8_route_with_additional_dependency(user_repo, tmp_path):
    flake8 = yaml.safe_load(_readme_config())["repos"][1]
    hook = flake8["hooks"][0]
    release = f"bcast-lint @ git+{REPOSITORY_URL}@v{bcast_lint.__version__}"
    hook["additional_dependencies"] = [f"bcast-lint @ git+file://{ROOT}@{_head_commit()}"
                                       if dependency == release else dependency
                                       for dependency in hook["additional_dependencies"]]
    (user_repo / "train.py").write_text(BROKEN)
    failed = _pre_commit(user_repo, tmp_path / "home", [flake8])
    assert failed.returncode == 1 and "BCL003" in failed.stdout, failed.stdout + failed.stderr
    (user_repo / "train.py").write_text(FIXED)
    passed = _pre_commit(user_repo, tmp_path / "home", [flake8])
    assert passed.returncode == 0, passed.stdout + passed.stderr

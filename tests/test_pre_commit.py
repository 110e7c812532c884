"""The README's pre-commit configurations work as written. The `repo: local` blocks are copied
from the README into a throwaway git repository and run by pre-commit, reaching no git host: each
fails on a broken file and passes on its fixed version, and the hooks leave out what
`extend-exclude` excludes. The remote form, which needs a release tag that does not exist yet, runs
with this checkout standing in for the release."""

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
README_BLOCK = re.compile(r"<!-- pre-commit-config:(\w+) .*?-->\n```yaml\n(.*?)```\n<!-- pre-commit-config:end -->", re.S)
HOOKS = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
    pytest.mark.slow,
    pytest.mark.network,  # pre-commit installs the flake8 route's environment with pip
]


def _readme_blocks() -> dict[str, str]:
    return dict(README_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8")))


def test_readme_has_a_local_block_the_flake8_route_and_the_remote_form():
    assert set(_readme_blocks()) == {"local", "flake8", "remote"}
    for name in ("local", "flake8"):
        (repository,) = yaml.safe_load(_readme_blocks()[name])["repos"]
        assert repository["repo"] == "local", name


def test_the_local_block_is_the_hook_of_this_repository_with_either_entry():
    text = _readme_blocks()["local"]
    (hook,) = yaml.safe_load(text)["repos"][0]["hooks"]
    ours = HOOKS["bcast-lint"]
    assert (hook["id"], hook["entry"], hook["types_or"]) == (ours["id"], ours["entry"], ours["types_or"])
    assert hook["language"] == "system"  # the installed bcast-lint: nothing to fetch
    assert yaml.safe_load(_swap_entries(text))["repos"][0]["hooks"][0]["entry"] == HOOKS["bcast-lint-fix"]["entry"]


def test_the_remote_form_names_this_repository_and_release_and_every_hook():
    text = _readme_blocks()["remote"]
    (ours,) = yaml.safe_load(text)["repos"]
    assert ours["repo"] == REPOSITORY_URL and ours["rev"] == f"v{bcast_lint.__version__}"
    assert set(HOOKS) == {"bcast-lint", "bcast-lint-fix"}
    assert "      - id: bcast-lint\n" in text and "# - id: bcast-lint-fix " in text


def test_both_hooks_force_the_excludes():
    for hook in HOOKS.values():
        assert "--force-exclude" in hook["entry"].split(), hook["id"]


def _swap_entries(text: str) -> str:
    """The local block with its commented `entry` in use and the other commented out, as the
    README says to do for the fix hook."""
    active, commented = re.findall(r"^( *)(# )?entry: .*$", text, re.M)
    assert not active[1] and commented[1], text
    return re.sub(r"^( *)(# )?entry: ", lambda m: m.group(1) + ("" if m.group(2) else "# ") + "entry: ", text,
                  flags=re.M)


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
    """`pre-commit run --all-files` with `config` as the repository's .pre-commit-config.yaml,
    from this environment activated (its bin first on PATH), as a user commits from theirs."""
    (repo / ".pre-commit-config.yaml").write_text(config)
    _git("add", "-A", cwd=repo)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PATH": path}
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo,
                          env=environment, capture_output=True, text=True, timeout=540)


def _project_with_a_vendored_copy(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.bcast-lint]\nextend-exclude = ["third_party"]\n')
    (repo / "third_party").mkdir()
    (repo / "third_party" / "vendored.py").write_text(BROKEN)  # excluded: never reported
    (repo / "train.py").write_text(BROKEN)


def _fails_then_passes_when_fixed(repo: Path, home: Path, config: str, expected: str) -> None:
    failed = _pre_commit(repo, home, config)
    assert failed.returncode == 1 and expected in failed.stdout, failed.stdout + failed.stderr
    (repo / "train.py").write_text(FIXED)
    passed = _pre_commit(repo, home, config)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def _fix_hook_fixes_then_passes(repo: Path, home: Path, config: str) -> None:
    (repo / "train.py").write_text(BROKEN)
    changed = _pre_commit(repo, home, config)
    assert changed.returncode == 1 and (repo / "train.py").read_text() == FIXED, changed.stdout + changed.stderr
    assert (repo / "third_party" / "vendored.py").read_text() == BROKEN
    assert _pre_commit(repo, home, config).returncode == 0


def test_readme_local_block_as_written(user_repo, tmp_path):
    config = _readme_blocks()["local"]
    _project_with_a_vendored_copy(user_repo)
    home = tmp_path / "home"
    _fails_then_passes_when_fixed(user_repo, home, config, "train.py:")
    assert "third_party" not in _pre_commit(user_repo, home, config).stdout
    # The fix hook: the README's other `entry` line in use.
    _fix_hook_fixes_then_passes(user_repo, home, _swap_entries(config))
    assert not home.exists() or not any(home.glob("repo*")), "a local, system hook installs nothing"


def test_readme_flake8_block_as_written(user_repo, tmp_path):
    (user_repo / "train.py").write_text(BROKEN)
    _fails_then_passes_when_fixed(user_repo, tmp_path / "home", _readme_blocks()["flake8"], "BCL003")


def test_readme_remote_form_with_this_checkout_as_the_release(user_repo, tmp_path):
    config = yaml.safe_load(_readme_blocks()["remote"])
    config["repos"][0].update(repo=str(ROOT), rev=_head_commit())  # this checkout stands in for the release
    _project_with_a_vendored_copy(user_repo)
    home = tmp_path / "home"
    _fails_then_passes_when_fixed(user_repo, home, yaml.safe_dump(config), "train.py:")
    fixing = {"repos": [{**config["repos"][0], "hooks": [{"id": "bcast-lint-fix"}]}]}
    _fix_hook_fixes_then_passes(user_repo, home, yaml.safe_dump(fixing))

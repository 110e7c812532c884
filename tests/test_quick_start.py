"""The README's commands work as written, in a fresh clone, as a new user runs them: the Quick
start's install-and-lint command (its own virtual environment: a system Python may refuse
installs, PEP 668), every `pip install` the README prints, the install command `verify` prints
when the harness extra is missing, the README's `verify` examples (their output as shown), the
flake8 command, and the test-suite command.

The clone and its `.venv` are shared by the tests of this module, in order: each later command
runs in that environment, activated, as the README's reader would run it. The user's training
environment is played by `pip install torch==2.13.0` (on these machines a CPU build on disk; a
bare torch requirement would download a multi-GB CUDA build).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BROKEN = ROOT / "fixtures" / "BCL003" / "unfilled_source.py"
ACTIVATE = ". .venv/bin/activate && "
# Every install command the README prints, and where this module runs it.
README_INSTALLS = {
    "pip install .",  # the Quick start
    "pip install '.[harness]'",  # test_harness_install_commands_and_verify_examples
    "pip install '/path/to/bcast-lint[harness]'",  # the same, the clone named by its path
    "pip install '.[flake8]'",  # test_flake8_extra_and_command
    "pip install -q -e '.[test]'",  # test_the_test_suite_command
}

pytestmark = [pytest.mark.timeout(900), pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]


def _section(title: str) -> str:
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)\n```", text, re.S)


def _quick_start_commands() -> list[str]:
    return _bash_blocks(_section("Quick start"))


def _shell(command: str, cwd: Path, timeout: float = 840, **environment: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **environment}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def _in_venv(command: str, clone: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`command` as typed in the clone's activated `.venv`."""
    return _shell(f". {clone}/.venv/bin/activate && {command}", cwd or clone)


def test_both_quick_start_commands_make_their_own_virtual_environment():
    commands = _quick_start_commands()
    assert len(commands) == 2
    for command in commands:
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install ")


def test_every_install_command_the_readme_prints_is_run_here():
    inline = re.findall(r"`(pip install [^`]+)`", README)
    in_blocks = [part.strip() for block in _bash_blocks(README) for line in block.splitlines()
                 for part in line.split("&&") if part.strip().startswith("pip install")]
    assert set(inline + in_blocks) == README_INSTALLS


def test_the_readme_states_the_harness_ranges_the_package_declares():
    from packaging.requirements import Requirement

    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    stated = [text for text in extras["harness"] if Requirement(text).name in ("torch", "accelerate")]
    assert len(stated) == 2 and all(f"`{text}`" in _section("Quick start") for text in stated), stated


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """A fresh clone with the Quick start's first command run in it, exactly as printed (the
    code to lint named): (the clone, a directory of the user's scripts, the command's result)."""
    status = subprocess.run(["git", "status", "--porcelain", "--", "bcast_lint", "pyproject.toml", "README.md",
                             "fixtures"], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    # verify --fix's temporary copies, beside a fixture a runtime test runs meanwhile, are not changes
    if [line for line in status if not line.endswith(".bcast-lint-fixed.py")]:
        pytest.skip("a clone holds the committed tree; commit the package first")
    base = tmp_path_factory.mktemp("quick-start")
    clone, work = base / "bcast-lint", base / "work"
    work.mkdir()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    shutil.copy(BROKEN, work / "train.py")
    command = _quick_start_commands()[0].replace("path/to/your/code", str(work / "train.py"))
    return clone, work, _shell(command, clone)


@pytest.mark.slow
@pytest.mark.network  # a fresh clone installed with pip
def test_the_install_and_lint_command_works_in_a_fresh_clone(quick_start):
    _, _, result = quick_start
    assert result.returncode == 1, result.stdout + result.stderr  # installed, ran, found the bug
    assert "train.py:" in result.stdout and "BCL003" in result.stdout


def _readme_verify_examples() -> list[tuple[str, Path, list[str]]]:
    """Each `$ bcast-lint verify ...` example of the README: its command, the fixture it was run
    on (the last one the text links before it), and the output lines shown."""
    section = _section("Proving findings and fixes at run time")
    examples = []
    for match in re.finditer(r"```text\n\$ (bcast-lint verify [^\n]*)\n(.*?)```", section, re.S):
        fixture = re.findall(r"\((fixtures/[^)]+\.py)\)", section[: match.start()])[-1]
        examples.append((match.group(1), ROOT / fixture, match.group(2).splitlines()))
    return examples


def _shown_lines_missing(shown: list[str], actual: list[str]) -> list[str]:
    """The shown lines that do not match actual lines in order; `[...]` matches anything, and a
    line that is only `[...]` stands for lines left out."""
    missing, position = [], 0
    for line in shown:
        if line.strip() == "[...]":
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("[...]")))
        found = next((index for index in range(position, len(actual)) if pattern.fullmatch(actual[index])), None)
        if found is None:
            missing.append(line)
        else:
            position = found + 1
    return missing


@pytest.mark.slow
@pytest.mark.network  # a fresh clone installed with pip
@pytest.mark.runtime
def test_harness_install_commands_and_verify_examples(quick_start):
    """In an environment that has torch but not the rest of the harness extra, `verify` names
    what is missing and the command that installs it; that command, and the README's, work as
    printed and keep the user's torch; then the README's `verify` examples give the output shown."""
    clone, work, _ = quick_start
    assert _in_venv("pip install -q torch==2.13.0", clone).returncode == 0
    torch_version = _in_venv("python -c 'import torch; print(torch.__version__)'", clone).stdout
    script = work / "train.py"
    missing = _in_venv(f"bcast-lint verify {script}", clone, work)
    assert missing.returncode == 2, missing.stdout + missing.stderr
    message = "bcast-lint verify: needs accelerate, psutil, not installed here; install the harness extra: "
    assert missing.stderr.startswith(message), missing.stderr
    printed = missing.stderr[len(message):].strip()
    assert printed == f"pip install '{clone}[harness]'"
    helped = _in_venv("bcast-lint verify --help", clone, work)
    assert f"\n  {printed}\n" in helped.stdout, helped.stdout
    for command in (printed, "pip install '.[harness]'"):  # printed is the clone's form, the README's other
        installed = _in_venv(command, clone)
        assert installed.returncode == 0, command + "\n" + installed.stdout + installed.stderr
    assert _in_venv("python -c 'import torch; print(torch.__version__)'", clone).stdout == torch_version

    examples = _readme_verify_examples()
    assert len(examples) == 2
    for command, fixture, shown in examples:
        name = command.split()[-1]
        shutil.copy(fixture, work / name)
        ran = _in_venv(command, clone, work)
        status = 0 if "--fix" in command else 1  # the fix is proven; the odd world size fails
        assert ran.returncode == status, ran.stdout + ran.stderr
        assert not _shown_lines_missing(shown, ran.stdout.splitlines()), (
            _shown_lines_missing(shown, ran.stdout.splitlines()), ran.stdout)


@pytest.mark.slow
@pytest.mark.network  # a fresh clone installed with pip
def test_flake8_extra_and_command(quick_start):
    clone, work, _ = quick_start
    assert _in_venv("pip install '.[flake8]'", clone).returncode == 0
    (work / "src").mkdir(exist_ok=True)
    shutil.copy(BROKEN, work / "src" / "train.py")
    (command,) = [block for block in _bash_blocks(_section("Usage")) if block.startswith("flake8")]
    result = _in_venv(command, clone, work)
    assert result.returncode == 1 and "src/train.py:" in result.stdout and "BCL003" in result.stdout, result.stdout


@pytest.mark.slow
@pytest.mark.network  # a fresh clone installed with pip
def test_the_test_suite_command(quick_start):
    """The Quick start's second command as printed, in the clone; PYTEST_ADDOPTS, which pytest
    puts before its own arguments, narrows the run to one small test file (the whole suite here
    would run this test again)."""
    clone, _, _ = quick_start
    command = _quick_start_commands()[1]
    result = _shell(command, clone, PYTEST_ADDOPTS="-p no:cacheprovider tests/test_model.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"\d+ passed", result.stdout), result.stdout[-2000:]

"""The command-line contract: output, exit codes, selection, noqa, configuration and fixes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BROKEN = """\
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast

accelerator = Accelerator()

ids = None
if accelerator.is_main_process:
    ids = torch.randperm(8, device=accelerator.device)[:4]
ids = broadcast(ids)
buffer = torch.empty(4, device=accelerator.device)
broadcast(buffer)
"""


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bcast_lint", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(BROKEN)
    (tmp_path / "clean.py").write_text("import os\nprint(os.getcwd())\n")
    return tmp_path


def test_text_output_and_exit_code(project):
    result = run("train.py", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.py:10:7: BCL001 'ids' is None on ranks where "
                               "'accelerator.is_main_process' is false")
    assert lines[1].startswith("train.py:11:10: BCL003 ")
    assert "Found 2 errors." in result.stdout


def test_clean_file_exits_zero(project):
    result = run("clean.py", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr


def test_json_output_has_the_contract_fields(project):
    result = run("--output-format", "json", "train.py", cwd=project)
    findings = json.loads(result.stdout)
    assert [(f["code"], f["line"], f["column"]) for f in findings] == [("BCL001", 10, 7), ("BCL003", 11, 10)]
    for key in ("message", "filename", "end_line", "end_column", "fix"):
        assert all(key in finding for finding in findings)
    assert findings[1]["fix"]["applicability"] == "safe"


def test_select_and_ignore_take_prefixes(project):
    assert json.loads(run("--output-format", "json", "--select", "BCL003", "train.py", cwd=project).stdout)[0]["code"] == "BCL003"
    ignored = run("--output-format", "json", "--ignore", "BCL00", "train.py", cwd=project)
    assert json.loads(ignored.stdout) == [] and ignored.returncode == 0


def test_exit_zero(project):
    assert run("--exit-zero", "train.py", cwd=project).returncode == 0


def test_noqa_with_code_and_bare(project):
    text = BROKEN.replace("ids = broadcast(ids)", "ids = broadcast(ids)  # noqa: BCL001")
    text = text.replace("buffer = torch.empty(4, device=accelerator.device)",
                        "buffer = torch.empty(4, device=accelerator.device)  # noqa")
    (project / "train.py").write_text(text)
    assert run("train.py", cwd=project).returncode == 0
    other_code = BROKEN.replace("ids = broadcast(ids)", "ids = broadcast(ids)  # noqa: BCL002")
    (project / "train.py").write_text(other_code)
    assert "BCL001" in run("train.py", cwd=project).stdout


def test_pyproject_configuration_and_cli_override(project):
    (project / "pyproject.toml").write_text('[tool.bcast-lint]\nignore = ["BCL003"]\n')
    assert "BCL003" not in run("train.py", cwd=project).stdout
    assert "BCL003" in run("--select", "BCL003", "--ignore", "BCL001", "train.py", cwd=project).stdout


def test_unknown_configuration_key_exits_2(project):
    (project / "pyproject.toml").write_text('[tool.bcast-lint]\nselekt = ["BCL003"]\n')
    result = run("train.py", cwd=project)
    assert result.returncode == 2 and "selekt" in result.stderr and "pyproject.toml" in result.stderr


def test_missing_path_exits_2_and_other_files_are_still_linted(project):
    result = run("missing.py", "train.py", cwd=project)
    assert result.returncode == 2
    assert "missing.py" in result.stderr and "BCL001" in result.stdout


def test_stdin_with_filename(project):
    result = run("-", "--stdin-filename", "pipe.py", cwd=project, stdin=BROKEN)
    assert result.returncode == 1 and result.stdout.startswith("pipe.py:10:7: BCL001")


def test_syntax_error_is_a_bcl900_finding(project):
    (project / "bad.py").write_text("import torch.distributed as dist\ndist.broadcast(x, 0\n")
    result = run("bad.py", "train.py", cwd=project)
    assert result.returncode == 1 and "bad.py:" in result.stdout and "BCL900" in result.stdout
    assert "train.py:10:7: BCL001" in result.stdout


def test_fix_applies_safe_fixes_only_and_reports_what_remains(project):
    result = run("--fix", "train.py", cwd=project)
    fixed = (project / "train.py").read_text()
    assert "torch.zeros(4, device=accelerator.device)" in fixed
    assert result.returncode == 1 and "BCL001" in result.stdout and "Fixed 1" in result.stdout


def test_unsafe_fixes_fix_everything_and_exit_zero(project):
    result = run("--fix", "--unsafe-fixes", "train.py", cwd=project)
    fixed = (project / "train.py").read_text()
    assert "ids = broadcast_object_list([ids])[0]" in fixed
    assert "from accelerate.utils import broadcast, broadcast_object_list" in fixed
    assert result.returncode == 0 and "Fixed 2 findings." in result.stdout
    assert run("train.py", cwd=project).returncode == 0


def test_exit_non_zero_on_fix(project):
    (project / "train.py").write_text(BROKEN.replace("ids = broadcast(ids)", "ids = broadcast(ids)  # noqa"))
    assert run("--fix", "--exit-non-zero-on-fix", "train.py", cwd=project).returncode == 1
    assert run("--fix", "--exit-non-zero-on-fix", "train.py", cwd=project).returncode == 0


def test_diff_writes_nothing(project):
    result = run("--diff", "train.py", cwd=project)
    assert result.returncode == 1
    assert "-buffer = torch.empty(4" in result.stdout and "+buffer = torch.zeros(4" in result.stdout
    assert (project / "train.py").read_text() == BROKEN
    assert run("--diff", "clean.py", cwd=project).returncode == 0


def test_fix_keeps_crlf_and_permissions(project):
    path = project / "train.py"
    path.write_bytes(BROKEN.replace("\n", "\r\n").encode())
    os.chmod(path, 0o640)
    run("--fix", "train.py", cwd=project)
    data = path.read_bytes()
    assert b"torch.zeros(4" in data and data.count(b"\r\n") == BROKEN.count("\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)


def test_help_lists_the_main_options(project):
    result = run("--help", cwd=project)
    for option in ("--fix", "--unsafe-fixes", "--diff", "--output-format", "--select", "--no-cache"):
        assert option in result.stdout


def test_add_noqa_silences_every_finding(project):
    assert run("--add-noqa", "train.py", cwd=project).returncode == 1
    text = (project / "train.py").read_text()
    assert "ids = broadcast(ids)  # noqa: BCL001" in text
    assert "# noqa: BCL003" in text
    assert run("train.py", cwd=project).returncode == 0


def test_show_settings_names_the_configuration_file(project):
    (project / "bcast-lint.toml").write_text('ignore = ["BCL003"]\n')
    result = run("--show-settings", "train.py", cwd=project)
    assert result.returncode == 0
    assert "bcast-lint.toml" in result.stdout and "BCL003" in result.stdout


def test_statistics_counts_per_code(project):
    result = run("--statistics", "train.py", cwd=project)
    assert "BCL001" in result.stdout and "broadcast-arg-maybe-none" in result.stdout


def test_github_annotations(project):
    result = run("--output-format", "github", "train.py", cwd=project)
    assert result.stdout.startswith("::error title=bcast-lint (BCL001),file=train.py,line=10,col=7")


def test_fix_leaves_noqa_lines_alone(project):
    text = BROKEN.replace("buffer = torch.empty(4, device=accelerator.device)",
                          "buffer = torch.empty(4, device=accelerator.device)  # noqa: BCL003")
    (project / "train.py").write_text(text)
    run("--fix", "--unsafe-fixes", "--select", "BCL003", "train.py", cwd=project)
    assert (project / "train.py").read_text() == text

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
    result = run("--output-format", "concise", "train.py", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.py:10:7: BCL001 'ids' is None on ranks where "
                               "'accelerator.is_main_process' is false")
    assert lines[1].startswith("train.py:11:10: BCL003 ")
    assert "Found 2 errors." in result.stdout


def test_full_output_is_the_default_with_the_source_line_a_caret_and_the_help(project):
    result = run("train.py", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.py:10:7: BCL001 'ids' is None on ranks where ")
    assert lines[1:4] == ["   |", "10 | ids = broadcast(ids)", "   |       ^^^^^^^^^^^^^^ BCL001"]
    assert lines[5].startswith("   = help: ") and len(lines[5]) > len("   = help: ")
    assert "train.py:11:10: BCL003 [*] " in result.stdout  # a safe fix applies: marked
    assert "11 | buffer = torch.empty(4, device=accelerator.device)" in result.stdout


def test_full_output_shows_stdin_lines_too(project):
    result = run("--stdin-filename", "pipe.py", cwd=project, stdin=BROKEN)
    assert "10 | ids = broadcast(ids)" in result.stdout


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


def test_missing_path_exits_1_and_other_files_are_still_linted(project):
    # README: 1 covers "a file that could not be checked", as ruff's E902 does.
    result = run("missing.py", "train.py", cwd=project)
    assert result.returncode == 1
    assert "missing.py: error: no such file or directory" in result.stderr and "BCL001" in result.stdout
    alone = run("missing.py", cwd=project)
    assert alone.returncode == 1 and "All checks passed!" not in alone.stdout


def test_stdin_with_filename(project):
    result = run("-", "--stdin-filename", "pipe.py", cwd=project, stdin=BROKEN)
    assert result.returncode == 1 and result.stdout.startswith("pipe.py:10:7: BCL001")


def test_stdin_filename_without_a_path_reads_stdin(project):
    (project / "train.py").write_text("print('clean now')\n")  # the directory has nothing to find
    result = run("--stdin-filename", "pipe.py", "--output-format", "concise", cwd=project, stdin=BROKEN)
    assert result.returncode == 1 and result.stdout.startswith("pipe.py:10:7: BCL001")
    assert "train.py" not in result.stdout


def test_directory_without_python_files_warns(project):
    (project / "docs").mkdir()
    (project / "docs" / "notes.md").write_text("dist.broadcast(x)\n")
    result = run("docs", cwd=project)
    assert result.returncode == 0
    assert "warning: No Python files found under the given path(s)" in result.stderr
    assert run("clean.py", cwd=project).stderr == ""


def test_codes_are_case_insensitive_on_the_command_line(project):
    result = run("--select", "bcl001", "--output-format", "json", "train.py", cwd=project)
    assert result.returncode == 1, result.stderr
    assert [f["code"] for f in json.loads(result.stdout)] == ["BCL001"]
    assert run("--ignore", "bcl00", "train.py", cwd=project).returncode == 0


def test_force_exclude_skips_excluded_paths_named_on_the_command_line(project):
    (project / "third_party").mkdir()
    (project / "third_party" / "vendored.py").write_text(BROKEN)
    (project / "pyproject.toml").write_text('[tool.bcast-lint]\nextend-exclude = ["third_party"]\n')
    assert run(".", cwd=project).stdout.count("third_party") == 0  # a walk skips it
    named = run("third_party/vendored.py", cwd=project)
    assert named.returncode == 1 and "third_party/vendored.py:10:7: BCL001" in named.stdout
    forced = run("--force-exclude", "third_party/vendored.py", "train.py", cwd=project)
    assert "third_party" not in forced.stdout and "train.py:10:7: BCL001" in forced.stdout
    (project / "pyproject.toml").write_text(
        '[tool.bcast-lint]\nextend-exclude = ["third_party"]\nforce-exclude = true\n')
    assert run("third_party/vendored.py", cwd=project).returncode == 0
    assert run("--no-force-exclude", "third_party/vendored.py", cwd=project).returncode == 1


def test_force_exclude_applies_to_the_stdin_filename(project):
    (project / "pyproject.toml").write_text('[tool.bcast-lint]\nextend-exclude = ["third_party"]\n')
    name = ("--stdin-filename", "third_party/vendored.py")
    assert run(*name, cwd=project, stdin=BROKEN).returncode == 1  # named: linted
    skipped = run("--force-exclude", *name, cwd=project, stdin=BROKEN)
    assert skipped.returncode == 0 and "BCL" not in skipped.stdout
    fixed = run("--force-exclude", "--fix", *name, "-", cwd=project, stdin=BROKEN)
    assert fixed.returncode == 0 and fixed.stdout == BROKEN  # handed back untouched


def test_syntax_error_is_a_bcl900_finding(project):
    (project / "bad.py").write_text("import torch.distributed as dist\ndist.broadcast(x, 0\n")
    result = run("bad.py", "train.py", cwd=project)
    assert result.returncode == 1 and "bad.py:" in result.stdout and "BCL900" in result.stdout
    assert "train.py:10:7: BCL001" in result.stdout


@pytest.mark.parametrize("selection", [("--select", "BCL001"), ("--ignore", "BCL9"),
                                       ("--ignore", "ALL", "--select", "BCL003")])
def test_syntax_error_is_reported_whatever_the_selection(project, selection):
    (project / "bad.py").write_text("import torch.distributed as dist\ndist.broadcast(x, 0\n")
    result = run(*selection, "bad.py", cwd=project)
    assert result.returncode == 1 and "bad.py:2:" in result.stdout and "BCL900" in result.stdout


def test_bcl900_has_a_rule_page(project):
    result = run("rule", "bcl900", cwd=project)
    assert result.returncode == 0 and result.stdout.startswith("# syntax-error (BCL900)")
    assert "## What it does" in result.stdout and "pre-filter" in result.stdout


def test_fix_applies_safe_fixes_only_and_reports_what_remains(project):
    result = run("--fix", "train.py", cwd=project)
    fixed = (project / "train.py").read_text()
    assert "torch.zeros(4, device=accelerator.device)" in fixed
    assert result.returncode == 1 and "BCL001" in result.stdout
    assert result.stdout.endswith(
        "Found 2 errors (1 fixed, 1 remaining).\n"
        "No fixes available (1 hidden fix can be enabled with the --unsafe-fixes option).\n")


def test_unsafe_fixes_fix_everything_and_exit_zero(project):
    result = run("--fix", "--unsafe-fixes", "train.py", cwd=project)
    fixed = (project / "train.py").read_text()
    assert "ids = broadcast_object_list([ids])[0]" in fixed
    assert "from accelerate.utils import broadcast, broadcast_object_list" in fixed
    assert result.returncode == 0 and result.stdout == "Found 2 errors (2 fixed, 0 remaining).\n"
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


def test_diff_says_what_it_would_fix_on_stderr_and_leaves_stdout_to_the_diff(project):
    result = run("--diff", "train.py", cwd=project)
    assert result.stdout.startswith("--- train.py\n") and "Would fix" not in result.stdout
    assert result.stderr == "Would fix 1 error (1 additional fix available with --unsafe-fixes).\n"
    everything = run("--diff", "--unsafe-fixes", "train.py", cwd=project)
    assert everything.stderr == "Would fix 2 errors.\n"
    unsafe_only = run("--diff", "--select", "BCL001", "train.py", cwd=project)
    assert unsafe_only.returncode == 0 and unsafe_only.stdout == ""
    assert unsafe_only.stderr == "No errors would be fixed (1 fix available with --unsafe-fixes).\n"


def test_hidden_fix_hint_only_when_there_are_hidden_fixes(project):
    safe_only = run("--select", "BCL003", "train.py", cwd=project)
    assert safe_only.stdout.endswith("Found 1 error.\n[*] 1 fixable with the --fix option.\n")
    assert "hidden" not in safe_only.stdout


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
    result = run("--add-noqa", "train.py", "clean.py", cwd=project)
    assert result.returncode == 0  # as ruff: the findings are silenced, not reported
    assert result.stdout == "" and result.stderr == "Added 2 noqa directives.\n"
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


# --- closed pipes and Ctrl-C -------------------------------------------------------------------


def _with_closed_stdout(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run with stdout a pipe whose reader is already gone, as `| head -1` leaves it."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([sys.executable, "-m", "bcast_lint", *args], cwd=cwd, stdout=writer,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(writer)


@pytest.mark.parametrize("args", [("--show-settings",), ("--diff", "."), (".",),
                                  ("rule", "--all"), ("--output-format", "json", "train.py")])
def test_a_closed_pipe_stops_quietly(project, args):
    result = _with_closed_stdout(*args, cwd=project)
    assert result.stderr == "" and result.returncode == 0, result.stderr


@pytest.mark.runtime
def test_a_closed_pipe_stops_verify_quietly(project):
    (project / "job.py").write_text("print('hello')\n")
    result = _with_closed_stdout("verify", "job.py", "--output-format", "json", cwd=project)
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr, result.stderr


def _many_files(directory: Path, count: int) -> None:
    """Enough work that the workers are still busy when Ctrl-C arrives."""
    program = (Path(__file__).resolve().parent.parent / "fixtures" / "BCL003" / "unfilled_source.py")
    body = program.read_text()
    directory.mkdir()
    for index in range(count):
        (directory / f"m{index}.py").write_text(body + f"\n# copy {index}\n" * (index % 3 + 1))


def test_ctrl_c_prints_interrupted_exits_130_and_ends_the_workers(project):
    psutil = pytest.importorskip("psutil")
    import signal
    import time

    _many_files(project / "many", 600)
    command = [sys.executable, "-m", "bcast_lint", "--no-cache", "--jobs", "2", "many"]
    # Its own process group, as a terminal gives a foreground job: Ctrl-C signals the whole group.
    process = subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(psutil.Process(process.pid).children()) < 2 and process.poll() is None:
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.05)
    time.sleep(0.5)  # let them get into their chunks
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr == "interrupted\n"
    # Every worker is gone within a second of the parent's exit.
    gone_by = time.monotonic() + 1
    while time.monotonic() < gone_by:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail("worker processes outlived the interrupted run by more than a second")


def test_ctrl_c_while_fix_writes_leaves_no_partial_file(project, monkeypatch, capsys):
    from bcast_lint import writer
    from bcast_lint.cli import main

    written = []

    def interrupted(source, destination):
        written.append(Path(source).read_bytes())
        raise KeyboardInterrupt

    monkeypatch.chdir(project)
    monkeypatch.setattr(writer.os, "replace", interrupted)
    assert main(["--no-cache", "--fix", "train.py"]) == 130
    assert capsys.readouterr().err.endswith("interrupted\n")
    assert written and b"torch.zeros(4" in written[0]  # the new contents were on their way
    assert (project / "train.py").read_text() == BROKEN  # the original is whole
    assert sorted(p.name for p in project.iterdir()) == ["clean.py", "train.py"]  # no temporary


def test_readme_usage_example_is_what_the_cli_prints(project):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    example = readme.split("```text\n$ bcast-lint train.py\n", 1)[1].split("```", 1)[0]
    assert run("--no-cache", "train.py", cwd=project).stdout == example


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_nul_byte_is_reported_at_its_own_line_and_column(project, newline):
    lines = ["import torch.distributed as dist", "x = 1", "y = 'caf\u00e9\0'", "dist.broadcast(x, 0)", ""]
    (project / "nul.py").write_bytes(newline.join(lines).encode())
    result = run("--output-format", "concise", "--no-cache", "nul.py", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "nul.py:3:10: BCL900 SyntaxError: source code cannot contain null bytes"


def test_rule_all_lists_every_rule_and_bcl900(project):
    from bcast_lint.codes import RULES

    result = run("rule", "--all", cwd=project)
    codes = [line.split()[0] for line in result.stdout.splitlines()]
    assert result.returncode == 0 and codes == [spec.code for spec in RULES] + ["BCL900"]
    assert result.stdout.splitlines()[-1].split(None, 2)[1:] == [
        "syntax-error", "Reports a file that Python cannot parse, at the position of the syntax error."]


def test_readme_configuration_examples_work_in_their_own_files(tmp_path):
    """The README shows the `[tool.bcast-lint]` table for pyproject.toml and the top-level keys
    for bcast-lint.toml; each, in its file, gives the same settings."""
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Configuration", 1)[1].split("\n### ", 1)[0]
    table, top_level = re.findall(r"```toml\n(.*?)```", section, re.S)
    assert table.startswith("[tool.bcast-lint]\n") and not top_level.startswith("[")
    shown = {}
    for name, text in (("pyproject.toml", table), ("bcast-lint.toml", top_level)):
        (tmp_path / name).mkdir()
        (tmp_path / name / name).write_text(text)
        result = run("--show-settings", cwd=tmp_path / name)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"Settings from: {tmp_path / name / name}\n")
        shown[name] = result.stdout.split("\n", 1)[1]
    assert shown["pyproject.toml"] == shown["bcast-lint.toml"]
    assert "ignore = ('BCL003',)" in shown["bcast-lint.toml"]

"""Hardening (issue 8): bcast-lint survives whatever it is given, and `--fix` never damages a file.

Every bad input is linted next to a good file, whose finding must still be reported: one bad file
never takes the rest of the run down. Most runs call the CLI in-process (fast); the ones that can
kill a process (deep nesting crashed LibCST's parser with a segfault), read stdin, or are killed
on purpose run it as a subprocess.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bcast_lint import fixer
from bcast_lint.cli import main
from bcast_lint.engine import lint_source
from bcast_lint.fixer import fix_source
from bcast_lint.flake8_plugin import BcastLintPlugin
from bcast_lint.model import SAFE, Edit, FileResult, Finding, Fix

ROOT = Path(__file__).resolve().parent.parent
RECEIVER = ROOT / "fixtures" / "BCL003" / "unfilled_source.py"
RECEIVER_FIXED = ROOT / "fixtures" / "BCL003" / "unfilled_source.fixed.py"
GOOD_FINDING = "good.py:11:18: BCL003 "  # the first of unfilled_source.py's two findings
LINT = ("--no-cache", "--jobs", "1")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main([*LINT, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def subprocess_cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bcast_lint", *LINT, *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=300)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch) -> Path:
    """A directory with good.py (two BCL003 findings), outside any repository or configuration."""
    (tmp_path / "good.py").write_bytes(RECEIVER.read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def assert_good_file_still_linted(out: str) -> None:
    assert any(line.startswith(GOOD_FINDING) for line in out.splitlines()), out


# -- syntax --------------------------------------------------------------------------------------
def test_syntax_error_is_a_bcl900_finding_with_its_position(workdir, capsys):
    (workdir / "broken.py").write_text("import torch.distributed as dist\n\ndist.broadcast(x, 0\n")
    code, out, err = cli(capsys, "broken.py", "good.py")
    assert code == 1
    assert "broken.py:3:" in out and " BCL900 SyntaxError: " in out, out
    assert "Traceback" not in err
    assert_good_file_still_linted(out)


@pytest.mark.parametrize("lines, where, bad", [
    ("if y:\n\tif x:\n        pass\n", "6:1", "TabError: inconsistent use of tabs and spaces"),
    ("x = 1\u00a0+ 2\n", "4:6", "invalid non-printable character U+00A0"),
    ("x = 'abc\n", "4:5", "unterminated string literal"),
    ("if x:\n    y = 1\n  z = 2\n", "6:8", "IndentationError: unindent does not match"),
])
def test_tokenizer_errors_are_reported_where_they_are(workdir, capsys, lines, where, bad):
    # LibCST reports every tokenizer error at 1:1; Python's position and message are used instead.
    (workdir / "bad.py").write_text("import torch.distributed as dist\nif x:\n    pass\n" + lines
                                    + "dist.broadcast(x, 0)\n")
    code, out, _ = cli(capsys, "bad.py")
    assert code == 1 and f"bad.py:{where}: BCL900 " in out and bad in out, out


def test_code_libcst_accepts_but_python_rejects_is_linted_and_never_fixed(workdir, capsys):
    # LibCST parses a module's grammar only; these are errors CPython raises while compiling.
    source = (RECEIVER.read_text() + "\nreturn None\n\ndef f(a, a):\n    nonlocal a\n")
    (workdir / "odd.py").write_text(source)
    code, out, _ = cli(capsys, "odd.py")
    assert code == 1 and "odd.py:11:18: BCL003" in out, out
    assert "fixable" not in out, out  # a fix is only offered if the result compiles
    code, out, err = cli(capsys, "--fix", "--show-fixes", "odd.py", "good.py")
    assert (workdir / "odd.py").read_text() == source
    assert "odd.py:11:18: BCL003 the fixed code would not compile (" in out, out
    assert (workdir / "good.py").read_bytes() == RECEIVER_FIXED.read_bytes()


def test_code_python_accepts_but_libcst_rejects_is_reported_as_not_checked(workdir, capsys):
    # LibCST's parser gives up on a few thousand implicitly concatenated strings; Python does not.
    strings = " ".join(["'a'"] * 5000)
    (workdir / "strings.py").write_text(f"import torch.distributed as dist\nx = ({strings})\n"
                                        "dist.broadcast(x, 0)\n")
    code, out, err = cli(capsys, "strings.py", "good.py")
    assert code == 1
    assert "strings.py: error: LibCST cannot parse this file, which Python accepts" in err, err
    assert "BCL900" not in out  # it is not a syntax error
    assert_good_file_still_linted(out)


# -- encodings and bytes -------------------------------------------------------------------------
@pytest.mark.parametrize("name, data, message", [
    ("undecodable.py", b"import torch.distributed as dist\nx = '\xff\xfe'\ndist.broadcast(x, 0)\n",
     "cannot decode"),
    ("unknown_coding.py", b"# -*- coding: no-such-codec -*-\nimport torch.distributed as dist\n"
                          b"dist.broadcast(x, 0)\n", "unknown encoding"),
    ("wrong_coding.py", b"# -*- coding: ascii -*-\nimport torch.distributed as dist\nx = '\xc3\xa9'\n"
                        b"dist.broadcast(x, 0)\n", "'ascii' codec"),
])
def test_undecodable_files_are_reported_not_linted(workdir, capsys, name, data, message):
    (workdir / name).write_bytes(data)
    code, out, err = cli(capsys, name, "good.py")
    assert code == 1
    assert f"{name}: error: cannot decode" in err and message in err, err
    assert_good_file_still_linted(out)


def test_a_coding_line_naming_another_valid_codec_is_honoured(workdir, capsys):
    # latin-1 decodes every byte: the file is linted as Python would read it.
    header = "# -*- coding: latin-1 -*-\n\"\"\"M\xe9gatron".encode("latin-1")
    (workdir / "latin.py").write_bytes(RECEIVER.read_bytes().replace(b'"""Megatron', header, 1))
    code, out, _ = cli(capsys, "latin.py")
    assert code == 1 and "latin.py:12:18: BCL003" in out, out
    cli(capsys, "--fix", "latin.py")
    # Still latin-1: the fix did not re-encode the file.
    expected = RECEIVER_FIXED.read_bytes().replace(b'"""Megatron', header, 1)
    assert (workdir / "latin.py").read_bytes() == expected


def test_utf8_bom_keeps_positions_and_survives_fix(workdir, capsys):
    bom = b"\xef\xbb\xbf"
    (workdir / "bom.py").write_bytes(bom + RECEIVER.read_bytes())
    code, out, _ = cli(capsys, "bom.py")
    assert "bom.py:11:18: BCL003" in out and "bom.py:17:16: BCL003" in out, out
    cli(capsys, "--fix", "bom.py")
    assert (workdir / "bom.py").read_bytes() == bom + RECEIVER_FIXED.read_bytes()


def test_nul_bytes_are_a_bcl900_finding(workdir, capsys):
    (workdir / "nul.py").write_bytes(b"import torch.distributed as dist\nx = 1\0\ndist.broadcast(x, 0)\n")
    code, out, err = cli(capsys, "nul.py", "good.py")
    # Python 3.11 gives no position (a ValueError), and LibCST puts tokenizer errors at 1:1.
    assert code == 1 and "nul.py:" in out and "BCL900" in out, out + err
    assert_good_file_still_linted(out)


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_crlf_and_cr_line_endings_keep_positions_and_survive_fix(workdir, capsys, newline):
    (workdir / "eol.py").write_bytes(RECEIVER.read_bytes().replace(b"\n", newline))
    code, out, _ = cli(capsys, "eol.py")
    assert "eol.py:11:18: BCL003" in out and "eol.py:17:16: BCL003" in out, out
    cli(capsys, "--fix", "eol.py")
    assert (workdir / "eol.py").read_bytes() == RECEIVER_FIXED.read_bytes().replace(b"\n", newline)


def test_mixed_line_endings_keep_positions_and_every_other_line_ending(workdir, capsys):
    lines = RECEIVER.read_bytes().splitlines(keepends=True)
    mixed = b"".join(line.replace(b"\n", b"\r\n") if number % 2 else line
                     for number, line in enumerate(lines))
    (workdir / "mixed.py").write_bytes(mixed)
    code, out, _ = cli(capsys, "mixed.py")
    assert "mixed.py:11:18: BCL003" in out and "mixed.py:17:16: BCL003" in out, out
    cli(capsys, "--fix", "mixed.py")
    fixed = (workdir / "mixed.py").read_bytes()
    assert fixed.replace(b"\r\n", b"\n") == RECEIVER_FIXED.read_bytes()
    endings = [line[len(line.rstrip(b"\r\n")):] for line in fixed.splitlines(keepends=True)]
    assert endings == [line[len(line.rstrip(b"\r\n")):] for line in mixed.splitlines(keepends=True)]


def test_form_feed_does_not_shift_lines(workdir, capsys):
    source = RECEIVER.read_bytes().replace(b"\n\n\ndef broadcast_like", b"\n\x0c\n\ndef broadcast_like")
    (workdir / "ff.py").write_bytes(source)
    code, out, _ = cli(capsys, "ff.py")
    assert "ff.py:11:18: BCL003" in out and "ff.py:17:16: BCL003" in out, out


# -- size and depth ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_200000_line_file(workdir):
    # Two thousand 100-line functions, then the broadcast: the shape of a large generated module.
    body = "".join(f"    v{j} = a + {j}\n" for j in range(97))
    functions = "".join(f"def f_{i}(a):\n{body}    return a\n\n" for i in range(1999))
    functions += "# padding\n" * (200_000 - 1999 * 100 - RECEIVER.read_text().count("\n"))
    offset = functions.count("\n")
    (workdir / "huge.py").write_text(functions + RECEIVER.read_text())
    assert (functions + RECEIVER.read_text()).count("\n") == 200_000
    started = time.monotonic()
    done = subprocess_cli("huge.py", cwd=workdir)
    elapsed = time.monotonic() - started
    out = done.stdout.decode()
    assert done.returncode == 1, done.stderr.decode()
    assert f"huge.py:{offset + 11}:18: BCL003" in out and f"huge.py:{offset + 17}:16: BCL003" in out, out
    assert elapsed < 300, f"a 200,000-line file took {elapsed:.0f}s"


DEEP = {
    # CPython refuses more than 200 nested brackets; LibCST's parser used to segfault on these.
    "parentheses": "(" * 3000 + "x" + ")" * 3000,
    "lists": "[" * 500 + "]" * 500,
    "calls": "f(" * 500 + "x" + ")" * 500,
    # Deeper than CPython's own parser goes: it raises MemoryError.
    "negations": "-" * 50_000 + "x",
    "nots": "not " * 20_000 + "x",
    "lambdas": "lambda: " * 20_000 + "x",
    # Valid Python 500 deep, deeper than the analysis recurses.
    "sums": " + ".join(["x"] * 500),
    "attributes": "x" + ".a" * 500,
    "subscripts": "x" + "[0]" * 500,
    "conditionals": "x if c else " * 500 + "x",
    "powers": " ** ".join(["x"] * 500),
}


@pytest.mark.timeout(600)
def test_deep_nesting_never_crashes_and_never_escapes_a_recursion_error(workdir):
    for name, expression in DEEP.items():
        (workdir / f"deep_{name}.py").write_text(
            f"import torch.distributed as dist\nx = {expression}\ndist.broadcast(x, 0)\n")
    (workdir / "deep_elifs.py").write_text(
        "import torch.distributed as dist\nif x == 0:\n    pass\n"
        + "".join(f"elif x == {i}:\n    pass\n" for i in range(1, 1500)) + "dist.broadcast(x, 0)\n")
    done = subprocess_cli(".", cwd=workdir)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1, f"exit {done.returncode} (a negative one is a signal)\n{err}"
    assert "Traceback" not in err and "RecursionError:" not in err, err
    assert_good_file_still_linted(out)
    reported = {line.split(":")[0] for line in (out + err).splitlines() if line.startswith("deep_")}
    assert reported == {f"deep_{name}.py" for name in DEEP} | {"deep_elifs.py"}, out + err


def test_deep_nesting_through_lint_source_and_the_flake8_plugin(workdir):
    # In a subprocess: a segfault in the parser would otherwise take pytest down with it.
    script = (
        "from bcast_lint.engine import lint_source\n"
        "from bcast_lint.flake8_plugin import BcastLintPlugin\n"
        "for depth in (500, 3000):\n"
        "    source = 'import torch.distributed as dist\\nx = ' + '(' * depth + 'x' + ')' * depth"
        " + '\\ndist.broadcast(x, 0)\\n'\n"
        "    result = lint_source(source.encode(), 'deep.py')\n"
        "    assert [f.code for f in result.findings] == ['BCL900'], result\n"
        "    list(BcastLintPlugin(None, 'deep.py', source.splitlines(True)).run())\n"
        "print('survived')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr


def test_empty_and_comment_only_files(workdir, capsys):
    (workdir / "empty.py").write_bytes(b"")
    (workdir / "blank.py").write_bytes(b"\n\n   \n")
    (workdir / "comment.py").write_bytes(b"# dist.broadcast(x, 0) would go here")
    (workdir / "bom_only.py").write_bytes(b"\xef\xbb\xbf")
    assert lint_source(b"", "empty.py") == FileResult("empty.py")
    assert lint_source(b"# broadcast", "comment.py") == FileResult("comment.py")
    code, out, err = cli(capsys, "empty.py", "blank.py", "comment.py", "bom_only.py")
    assert code == 0, out + err


# -- paths ---------------------------------------------------------------------------------------
def test_symlink_loops_are_walked_once(workdir, capsys):
    package = workdir / "pkg"
    package.mkdir()
    (package / "mod.py").write_bytes(RECEIVER.read_bytes())
    os.symlink("..", package / "parent")  # pkg/parent -> the work directory, which holds pkg
    os.symlink("self.py", package / "self.py")  # a file linking to itself
    os.symlink("b.py", package / "a.py")
    os.symlink("a.py", package / "b.py")
    code, out, err = cli(capsys, ".")
    assert code == 1
    assert out.count("mod.py:11:18: BCL003") == 1, out  # found once, not once per loop
    assert "pkg/self.py: error: symbolic link loop" in err, err
    assert "pkg/a.py: error: symbolic link loop" in err, err
    assert_good_file_still_linted(out)


def _permissions_enforced(probe: Path) -> bool:
    probe.write_text("")
    probe.chmod(0)
    try:
        probe.read_text()
    except PermissionError:
        return True
    finally:
        probe.chmod(0o600)
        probe.unlink()
    return False


def _as_unprivileged_user(directory: Path) -> list[str]:
    """A command prefix under which file permissions apply. Root (how these tests run in CI)
    reads every file, so root runs bcast-lint as `nobody` instead, where setpriv exists."""
    if _permissions_enforced(directory / "probe"):
        return []
    if os.geteuid() == 0 and shutil.which("setpriv"):
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    pytest.skip("file permissions are not enforced for this user, and setpriv is missing")


def test_unreadable_file_and_directory():
    with tempfile.TemporaryDirectory() as scratch:  # not tmp_path: nobody may not enter it
        workdir = Path(scratch)
        workdir.chmod(0o755)
        prefix = _as_unprivileged_user(workdir)
        (workdir / "good.py").write_bytes(RECEIVER.read_bytes())
        (workdir / "secret.py").write_bytes(RECEIVER.read_bytes())
        (workdir / "locked").mkdir()
        (workdir / "locked" / "inside.py").write_bytes(RECEIVER.read_bytes())
        (workdir / "secret.py").chmod(0)
        (workdir / "locked").chmod(0)
        command = [*prefix, sys.executable, "-m", "bcast_lint", *LINT]
        try:
            lint = subprocess.run([*command, "."], cwd=workdir, capture_output=True, text=True, timeout=300)
            fix = subprocess.run([*command, "--fix", "secret.py"], cwd=workdir, capture_output=True,
                                 text=True, timeout=300)
        finally:
            (workdir / "locked").chmod(0o755)
            (workdir / "secret.py").chmod(0o644)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "secret.py: error: cannot read: Permission denied" in lint.stderr, lint.stderr
    assert "locked: error: permission denied" in lint.stderr, lint.stderr
    assert "Traceback" not in lint.stderr + fix.stderr
    assert_good_file_still_linted(lint.stdout)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    assert "secret.py: error: cannot read: Permission denied" in fix.stderr, fix.stderr


def test_missing_path_exits_1_with_a_clear_message_and_the_rest_is_linted(workdir, capsys):
    code, out, err = cli(capsys, "no_such_file.py", "good.py")
    assert code == 1  # a path that could not be checked, as ruff's E902
    assert "no_such_file.py: error: no such file or directory" in err, err
    assert_good_file_still_linted(out)


def test_files_named_explicitly_are_linted_whatever_their_suffix(workdir, capsys):
    (workdir / "train").write_bytes(RECEIVER.read_bytes())  # a script without a suffix
    (workdir / "weights.bin").write_bytes(bytes(range(256)) * 8 + b"distributed.broadcast(x)")
    (workdir / "notes.txt").write_text("remember to call torch.distributed.broadcast(ids)!\n")
    code, out, err = cli(capsys, "train", "weights.bin", "notes.txt", "good.py")
    assert code == 1
    assert "train:11:18: BCL003" in out, out
    assert "weights.bin" in out + err and "notes.txt:1:" in out, out + err
    assert "Traceback" not in err
    assert_good_file_still_linted(out)
    (workdir / "sub").mkdir()
    (workdir / "sub" / "train").write_bytes(RECEIVER.read_bytes())
    code, out, _ = cli(capsys, "sub")
    assert code == 0, out  # a directory walk only picks up Python files


def test_stdin(workdir):
    data = RECEIVER.read_bytes()
    done = subprocess_cli("-", "--stdin-filename", "piped.py", cwd=workdir, stdin=data)
    assert done.returncode == 1 and b"piped.py:11:18: BCL003" in done.stdout, done.stderr
    done = subprocess_cli("--fix", "-", cwd=workdir, stdin=data)
    assert done.stdout.startswith(RECEIVER_FIXED.read_bytes()), done.stdout
    done = subprocess_cli("-", cwd=workdir, stdin=b"\xff\xfe\x00torch.distributed.broadcast(x)")
    assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr


def test_fix_from_stdin_writes_exactly_the_source_to_stdout(workdir):
    # Editors and formatters replace the buffer with stdout (ruff: source on stdout, report on stderr).
    done = subprocess_cli("--fix", "-", cwd=workdir, stdin=RECEIVER.read_bytes())
    assert done.stdout == RECEIVER_FIXED.read_bytes(), done.stdout
    clean = b"import os\nprint(os.getcwd())\n"
    assert subprocess_cli("--fix", "-", cwd=workdir, stdin=clean).stdout == clean


# -- --fix under faults --------------------------------------------------------------------------
def test_fix_skips_a_file_modified_between_read_and_write(workdir, capsys, monkeypatch):
    (workdir / "moving.py").write_bytes(RECEIVER.read_bytes())
    edited = RECEIVER.read_bytes() + b"# edited by someone else meanwhile\n"
    real_fix_source = fixer.fix_source

    def fix_while_someone_edits(source, filename, *args, **kwargs):
        if filename.endswith("moving.py"):
            (workdir / "moving.py").write_bytes(edited)
        return real_fix_source(source, filename, *args, **kwargs)

    monkeypatch.setattr(fixer, "fix_source", fix_while_someone_edits)
    code, out, err = cli(capsys, "--fix", "moving.py", "good.py")
    assert code == 1
    assert "moving.py: error: not fixed: the file changed while it was being linted" in err, err
    assert (workdir / "moving.py").read_bytes() == edited
    assert (workdir / "good.py").read_bytes() == RECEIVER_FIXED.read_bytes()


@pytest.mark.parametrize("failure", ["replace", "write", "mkstemp"])
def test_fix_leaves_the_original_when_the_disk_write_fails(workdir, capsys, monkeypatch, failure):
    from bcast_lint import writer

    (workdir / "full.py").write_bytes(RECEIVER.read_bytes())
    full_disk = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fail(*args, **kwargs):
        raise full_disk

    if failure == "replace":
        monkeypatch.setattr(writer.os, "replace", fail)
    elif failure == "write":
        monkeypatch.setattr(writer.os, "fsync", fail)  # after the write, before the rename
    else:
        monkeypatch.setattr(writer.tempfile, "mkstemp", fail)
    code, out, err = cli(capsys, "--fix", "full.py")
    assert code == 1
    assert "full.py: error: not fixed: " in err and "No space left on device" in err, err
    assert (workdir / "full.py").read_bytes() == RECEIVER.read_bytes()
    assert sorted(p.name for p in workdir.iterdir()) == ["full.py", "good.py"]  # no temporary left


def test_fix_reports_and_leaves_read_only_files(workdir, capsys):
    (workdir / "frozen.py").write_bytes(RECEIVER.read_bytes())
    (workdir / "frozen.py").chmod(0o444)
    try:
        code, out, err = cli(capsys, "--fix", "frozen.py", "good.py")
    finally:
        (workdir / "frozen.py").chmod(0o644)
    assert code == 1
    assert "frozen.py: error: not fixed: the file is read-only" in err, err
    assert (workdir / "frozen.py").read_bytes() == RECEIVER.read_bytes()
    assert (workdir / "good.py").read_bytes() == RECEIVER_FIXED.read_bytes()


def test_a_file_that_could_not_be_written_still_reports_its_findings(workdir, capsys):
    (workdir / "frozen.py").write_bytes(RECEIVER.read_bytes())
    (workdir / "frozen.py").chmod(0o444)
    try:
        code, out, err = cli(capsys, "--fix", "frozen.py")
    finally:
        (workdir / "frozen.py").chmod(0o644)
    assert "frozen.py: error: not fixed: the file is read-only" in err, err
    # The file still holds both findings; "No findings" would be wrong.
    assert "frozen.py:11:18: BCL003" in out and "frozen.py:17:16: BCL003" in out, out


def test_fix_through_a_symlink_changes_the_target_and_keeps_the_link(workdir, capsys):
    os.symlink("good.py", workdir / "link.py")
    cli(capsys, "--fix", "link.py")
    assert (workdir / "link.py").is_symlink()
    assert (workdir / "good.py").read_bytes() == RECEIVER_FIXED.read_bytes()


def test_fix_keeps_the_file_mode(workdir, capsys):
    (workdir / "good.py").chmod(0o750)
    cli(capsys, "--fix", "good.py")
    assert stat.S_IMODE((workdir / "good.py").stat().st_mode) == 0o750
    assert (workdir / "good.py").read_bytes() == RECEIVER_FIXED.read_bytes()


def test_add_noqa_never_writes_into_a_string_or_after_a_backslash(workdir, capsys):
    source = ("import torch\nimport torch.distributed as dist\n"
              "buf = torch.empty(4, device=\"\"\"cuda\n\"\"\")\ndist.broadcast(buf, 0)\n"
              "other = torch.empty(\n    4)\ndist.broadcast(other, 0)\n")
    (workdir / "strings.py").write_text(source)
    cli(capsys, "--add-noqa", "strings.py")
    written = (workdir / "strings.py").read_text()
    # Line 3 ends inside the string: a comment there would become part of the device name.
    assert written == source.replace("torch.empty(\n", "torch.empty(  # noqa: BCL003\n"), written
    code, out, _ = cli(capsys, "strings.py")
    assert "strings.py:3:7: BCL003" in out and "strings.py:6:" not in out, out


def test_add_noqa_on_a_read_only_file_is_reported_not_a_traceback(workdir, capsys):
    (workdir / "frozen.py").write_bytes(RECEIVER.read_bytes())
    (workdir / "frozen.py").chmod(0o444)
    try:
        code, _, err = cli(capsys, "--add-noqa", "frozen.py", "good.py")
    finally:
        (workdir / "frozen.py").chmod(0o644)
    assert code == 1 and "frozen.py: error: " in err and "read-only" in err, err
    assert (workdir / "frozen.py").read_bytes() == RECEIVER.read_bytes()
    assert b"# noqa: BCL003" in (workdir / "good.py").read_bytes()


def test_a_fix_that_does_not_remove_its_finding_is_not_applied_over_and_over(monkeypatch):
    # A rule bug seen in the wild (BCL001 before an explicit `else: x = None`): the fix inserts a
    # line and the finding stays. The fixer must not insert it once per pass.
    def stubborn_lint(source, filename, enabled=None, project=None):
        edit = Edit(1, 1, 1, 1, "x = 0\n")
        fix = Fix(SAFE, "insert a placeholder", (edit,))
        return FileResult(filename, (Finding("BCL001", "'x' is None", filename, 1, 1, 1, 2, fix),))

    monkeypatch.setattr(fixer, "lint_source", stubborn_lint)
    outcome = fix_source(b"x = None\n", "stubborn.py", lambda code: True, unsafe=False)
    assert outcome.source == b"x = None\n"
    assert not outcome.applied


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_killing_a_fix_run_leaves_every_file_original_or_fully_fixed(tmp_path):
    original, fixed = RECEIVER.read_bytes(), RECEIVER_FIXED.read_bytes()
    tree = tmp_path / "tree"
    for index in range(200):  # enough for a kill to land between writes (60 were written too fast)
        package = tree / f"pkg{index % 10}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod_{index:03d}.py").write_bytes(original)
    files = sorted(tree.rglob("*.py"))
    rng = random.Random(8)
    seen_partial = False
    for attempt in range(3):
        process = subprocess.Popen([sys.executable, "-m", "bcast_lint", *LINT, "--fix", str(tree)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_until_some_file_changes(files, original, process)
        time.sleep(rng.uniform(0, 0.5))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        contents = [path.read_bytes() for path in files]
        damaged = [str(path) for path, data in zip(files, contents) if data not in (original, fixed)]
        assert not damaged, damaged
        seen_partial |= original in contents and fixed in contents
        # A kill between creating and renaming a temporary leaves it behind. It is named
        # .bcast-lint-*.tmp, so no later run lints it, and it never replaces a source file.
        leftovers = [p for p in tree.rglob("*") if p.is_file() and p.suffix != ".py"]
        assert all(p.name.startswith(".bcast-lint-") and p.name.endswith(".tmp") for p in leftovers)
        for path in files:
            path.write_bytes(original)
    assert seen_partial, "the kill never landed mid-run: the test proved nothing"
    done = subprocess.run([sys.executable, "-m", "bcast_lint", *LINT, "--fix", str(tree)],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(path.read_bytes() == fixed for path in files)


def _wait_until_some_file_changes(files: list[Path], original: bytes, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if any(path.read_bytes() != original for path in files[:20]):
            return
        time.sleep(0.02)


# -- the flake8 plugin ---------------------------------------------------------------------------
def test_flake8_plugin_survives_bad_input():
    api = "import torch.distributed as dist\n"
    for source in ["", "\n", api, "\ufeff" + api + "dist.broadcast(x, 0)\n", api + "dist.broadcast(\n",
                   api.replace("\n", "\r\n") + "dist.broadcast(x, 0)\r\n",
                   "# -*- coding: latin-1 -*-\n" + api + "dist.broadcast('\xe9', 0)\n",
                   api + "dist.broadcast(x, 0)\x00\n"]:
        plugin = BcastLintPlugin(None, "input.py", source.splitlines(keepends=True))
        for line, column, message, _ in plugin.run():
            assert line >= 1 and column >= 0 and message.startswith("BCL")


def test_real_flake8_with_the_plugin_survives_bad_files(workdir):
    # Not here: a 500-term sum (pyflakes' RecursionError aborts flake8) and 20,000 `not`s
    # (flake8's own ast.parse raises MemoryError); flake8 fails on those before any plugin runs.
    api = "import torch.distributed as dist\n"
    (workdir / "syntax.py").write_text(api + "dist.broadcast(x, 0\n")
    (workdir / "nul.py").write_bytes(api.encode() + b"x = 1\0\ndist.broadcast(x, 0)\n")
    (workdir / "bom.py").write_bytes(b"\xef\xbb\xbf" + RECEIVER.read_bytes())
    (workdir / "crlf.py").write_bytes(RECEIVER.read_bytes().replace(b"\n", b"\r\n"))
    (workdir / "parens.py").write_text(api + "x = " + DEEP["parentheses"] + "\ndist.broadcast(x, 0)\n")
    strings = " ".join(["'a'"] * 5000)
    (workdir / "strings.py").write_text(f"{api}x = ({strings})\ndist.broadcast(x, 0)\n")
    (workdir / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\n" + api.encode()
                                       + b"x = torch.empty(4)  # \xe9\ndist.broadcast(x, 0)\n")
    done = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "BCL,E9", "."],
                          cwd=workdir, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    for expected in ("./good.py:11:18: BCL003", "./bom.py:11:18: BCL003", "./crlf.py:17:16: BCL003",
                     "./latin.py:4:5: BCL003", "./syntax.py:2:", "./nul.py:1:1: E999", "./parens.py:2:"):
        assert expected in done.stdout, done.stdout


# -- real code -----------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.network  # the sdists, on first use
@pytest.mark.timeout(900)
def test_real_world_corpus_lints_without_errors_and_every_finding_is_documented(corpus_dir):
    """accelerate, transformers, trl, peft, diffusers and deepspeed at pinned versions (see
    docs/real-world.md): no crash, no file left unchecked, and each finding has a verdict there.
    Downloads the sdists (~20 MB, ~20 s) on first use, into benchmarks/.corpus when the checkout
    has one, else into a cache outside the checkout that later clones reuse (CI clones afresh)."""
    script = [sys.executable, str(ROOT / "scripts" / "lint_real_world.py"), "--corpus-dir", str(corpus_dir),
              "--check-docs", str(ROOT / "docs" / "real-world.md")]
    done = subprocess.run(script, cwd=ROOT, capture_output=True, text=True, timeout=900)
    if done.returncode != 0 and "pip download" in done.stderr and "Could not" in done.stderr:
        pytest.skip(f"the corpus could not be downloaded: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stdout + done.stderr

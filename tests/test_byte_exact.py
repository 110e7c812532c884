"""`--fix`, `--diff` and `--add-noqa` change exactly what they mean to, byte for byte (issue 12).

Every character that `str.splitlines` takes for a line end but Python's tokenizer does not
(`\\x0c`, `\\x1c`-`\\x1e`, `\\x85`, U+2028, U+2029) is put in a comment line, in a string and a
trailing comment on the line the fix edits, and in the lines around it; each file is written with
LF, CRLF or CR-only line ends, in UTF-8 with and without a BOM and in a PEP 263 latin-1 file.
The expected bytes are built here from the same lines, independently of bcast_lint's Source.

A hypothesis test then mixes these characters into the fixture programs (comments at line ends,
line ends, BOM) and checks that `--fix` changes nothing but what the fix changes.
"""

from __future__ import annotations

import io
import re
import tokenize

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bcast_lint.analysis.project import Project
from bcast_lint.cli import main
from bcast_lint.config import Settings
from bcast_lint.runner import FIX, Task, process
from tests.fixture_files import fixed_version, programs

ODD = ["\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
NEWLINES = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
ENCODINGS = ["utf-8", "utf-8-bom", "latin-1"]
COOKIE = "# -*- coding: latin-1 -*-"
BOM = b"\xef\xbb\xbf"

# Line 8 is the one BCL003's fix edits (`empty` becomes `zeros`); it has three lines either side.
# Line 1 becomes the coding cookie in the latin-1 file.
_LINES = [
    "# byte-exact",
    "import torch",
    "import torch.distributed as dist",
    "# a comment holding {c} in it",
    "def f():",
    '    note = "{c}"  # {c}',
    "{ws}    x = 1",
    "    buf = torch.empty(4)  # {c} the buffer",
    "    if dist.get_rank() == 0:",
    "        buf[:2] = torch.ones(2)",
    '    dist.broadcast(buf, 0)  # "{c}"',
    "    return note, x",
]
_EDITED = 8


def _case_list():
    for encoding in ENCODINGS:
        for newline in NEWLINES:
            for char in ODD:
                if encoding == "latin-1" and ord(char) > 0xFF:
                    continue  # latin-1 has no line or paragraph separator
                yield pytest.param(char, newline, encoding, id=f"{encoding}-{newline}-U+{ord(char):04X}")


_CASES = list(_case_list())


def _program(char: str, newline: str, encoding: str, fixed: bool = False) -> list[bytes]:
    """The file's lines as bytes, each with its line end."""
    # Only a form feed is whitespace in code (at a line's start); the others are comment and string text.
    lines = [line.format(c=char, ws=char if char == "\x0c" else "") for line in _LINES]
    if fixed:
        lines[_EDITED - 1] = lines[_EDITED - 1].replace("torch.empty", "torch.zeros")
    if encoding == "latin-1":
        lines[0] = COOKIE
    codec = "utf-8" if encoding == "utf-8-bom" else encoding
    encoded = [(line + NEWLINES[newline]).encode(codec) for line in lines]
    if encoding == "utf-8-bom":
        encoded[0] = BOM + encoded[0]
    return encoded


def _run(capsysbinary, *args: str) -> tuple[int, bytes]:
    code = main(["--no-cache", *args])
    return code, capsysbinary.readouterr().out


@pytest.mark.parametrize("char, newline, encoding", _CASES)
def test_fix_is_byte_exact(tmp_path, monkeypatch, capsysbinary, char, newline, encoding):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.py").write_bytes(b"".join(_program(char, newline, encoding)))
    _run(capsysbinary, "--fix", "f.py")
    assert (tmp_path / "f.py").read_bytes() == b"".join(_program(char, newline, encoding, fixed=True))


@pytest.mark.parametrize("char, newline, encoding", _CASES)
def test_diff_is_byte_exact(tmp_path, monkeypatch, capsysbinary, char, newline, encoding):
    monkeypatch.chdir(tmp_path)
    before = _program(char, newline, encoding)
    (tmp_path / "f.py").write_bytes(b"".join(before))
    code, out = _run(capsysbinary, "--diff", "f.py")
    after = _program(char, newline, encoding, fixed=True)
    first, last = _EDITED - 4, _EDITED + 3  # 0-based: three lines of context either side
    expected = (b"--- f.py\n+++ f.py\n@@ -5,7 +5,7 @@\n"
                + b"".join(b" " + line for line in before[first:_EDITED - 1])
                + b"-" + before[_EDITED - 1] + b"+" + after[_EDITED - 1]
                + b"".join(b" " + line for line in before[_EDITED:last]))
    assert code == 1 and out == expected
    assert (tmp_path / "f.py").read_bytes() == b"".join(before)


@pytest.mark.parametrize("char, newline, encoding", _CASES)
def test_add_noqa_is_byte_exact(tmp_path, monkeypatch, capsysbinary, char, newline, encoding):
    monkeypatch.chdir(tmp_path)
    before = _program(char, newline, encoding)
    (tmp_path / "f.py").write_bytes(b"".join(before))
    _run(capsysbinary, "--add-noqa", "f.py")
    ending = NEWLINES[newline].encode()
    expected = list(before)
    expected[_EDITED - 1] = expected[_EDITED - 1][:-len(ending)] + b"  # noqa: BCL003" + ending
    assert (tmp_path / "f.py").read_bytes() == b"".join(expected)
    assert _run(capsysbinary, "f.py")[0] == 0  # and the comment silences the finding


# -- any fixture program, any mix of these characters --------------------------------------------
_FIXABLE = [program for program in programs() if fixed_version(program).exists()]
_DECORATION = re.compile("  # ~[" + "".join(ODD) + "]*~")


def _commentable(text: str) -> list[int]:
    """0-based indexes of the lines whose end is outside a string and not after a backslash."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return sorted({token.start[0] - 1 for token in tokens if token.type in (tokenize.NEWLINE, tokenize.NL)})


@st.composite
def _mixed_programs(draw):
    program = draw(st.sampled_from(_FIXABLE))
    text = program.read_text(encoding="utf-8")
    lines = text.split("\n")
    candidates = [i for i in _commentable(text) if i < len(lines) - 1]
    chosen = draw(st.lists(st.sampled_from(candidates), max_size=8, unique=True))
    for index in chosen:
        lines[index] += "  # ~" + "".join(draw(st.lists(st.sampled_from(ODD), min_size=1, max_size=4))) + "~"
    newline = draw(st.sampled_from(list(NEWLINES.values())))
    bom = BOM if draw(st.booleans()) else b""
    return program, bom + newline.join(lines).encode("utf-8"), newline, bom


def _fix(name: str, data: bytes) -> bytes:
    outcome = process(Task(name, data), Settings(unsafe_fixes=True), FIX, Project())
    return data if outcome.new is None else outcome.new


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mixed_programs())
def test_fix_changes_nothing_but_what_the_fix_changes(mixed):
    program, data, newline, bom = mixed
    fixed = _fix(str(program), data)
    assert fixed.startswith(bom)
    text = fixed[len(bom):].decode("utf-8")
    decorations = _DECORATION.findall(data[len(bom):].decode("utf-8"))
    # Every decoration survives where it was (a fix may copy a line, and its comment, elsewhere)...
    assert len(_DECORATION.findall(text)) >= len(decorations)
    # ...the line ends are the file's own, and without the decorations the result is what the fix
    # makes of the plain program.
    assert "\n" not in text.replace(newline, "") and "\r" not in text.replace(newline, "")
    plain = _fix(str(program), program.read_bytes()).decode("utf-8")
    assert _DECORATION.sub("", text).replace(newline, "\n") == plain

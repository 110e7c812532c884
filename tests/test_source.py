"""Source: one newline model (only \\r\\n, \\r and \\n end a line), decoding as Python does, edits
spliced into the bytes; and the pipeline never advertises a fix it will not apply (issue 12)."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from bcast_lint.model import Edit
from bcast_lint.source import Source

ODD = "\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_only_cr_lf_and_crlf_end_lines():
    source = Source.from_text(f"a{ODD}b\r\nc\rd\ne")
    assert source.line_count == 4
    assert [source.line(n) for n in range(1, 6)] == [f"a{ODD}b", "c", "d", "e", ""]
    assert source.lines() == [f"a{ODD}b\r\n", "c\r", "d\n", "e"]
    assert source.newline == "\r\n"


def test_a_final_line_end_starts_no_line_and_an_empty_file_has_one_empty_line():
    assert Source.from_text("a\n").line_count == 1
    assert Source.from_text("").line_count == 1 and Source.from_text("").byte_lines() == []
    assert Source.from_text("x = 1").newline == "\n"


def test_decodes_as_python_does():
    bom = Source.from_bytes(b"\xef\xbb\xbfx = '\xc3\xa9'\n")
    assert (bom.encoding, bom.bom, bom.text) == ("utf-8", b"\xef\xbb\xbf", "x = '\xe9'\n")
    latin = Source.from_bytes(b"#!/usr/bin/env python\r# -*- coding: latin-1 -*-\rx = '\xe9'\r")
    assert latin.encoding == "iso-8859-1" and latin.line(3) == "x = '\xe9'"  # a CR-only cookie
    with pytest.raises(SyntaxError):
        Source.from_bytes(b"# -*- coding: no-such-codec -*-\n")
    with pytest.raises(UnicodeDecodeError):
        Source.from_bytes(b"x = 1\ny = 2\nz = '\xff'\n")


def test_edits_change_only_their_own_bytes():
    data = f"# -*- coding: latin-1 -*-\r\nx = '\xe9\x85'  # \x0c\r\ny = 2\r\n".encode("latin-1")
    source = Source.from_bytes(data)
    column = source.line(2).index("'  #") + 2  # just after the closing quote
    fixed = source.apply([Edit(2, column, 2, column, " + '\xe8'"), Edit(3, 1, 3, 1, "z = 3\n")])
    assert fixed == data.replace(b"'  #", b"' + '\xe8'  #").replace(b"y = 2", b"z = 3\r\ny = 2")


def test_edits_keep_the_bom_and_positions_count_characters():
    data = "\ufeffx = '\u2028'; y = 1\n".encode("utf-8")
    source = Source.from_bytes(data)
    start = source.line(1).index("y") + 1
    assert source.apply([Edit(1, start, 1, start + 1, "w")]) == data.replace(b"y", b"w")


def test_two_insertions_at_one_place_go_last_listed_first():
    source = Source.from_text("x = 1\n")
    assert source.apply([Edit(1, 1, 1, 1, "a"), Edit(1, 1, 1, 1, "b"), Edit(1, 5, 1, 6, "2")]) == b"bax = 2\n"


def test_many_edits_through_a_file_with_wide_characters():
    lines = [f"v{i} = '\u00e9\u2028{i}'\n" for i in range(300)]
    source = Source.from_text("".join(lines))
    edits = [Edit(i + 1, 1, i + 1, 2, "w") for i in range(0, 300, 3)]
    expected = "".join("w" + line[1:] if i % 3 == 0 else line for i, line in enumerate(lines))
    assert source.apply(edits) == expected.encode("utf-8")


def test_content_the_encoding_cannot_hold_raises():
    source = Source.from_bytes(b"# -*- coding: latin-1 -*-\nx = 1\n")
    with pytest.raises(UnicodeEncodeError):
        source.apply([Edit(2, 1, 2, 1, "\u2028")])


def test_reduced_lines_map_back():
    source = Source.from_text("a\nb\nc\nd\n").parsed((1, 3, 4))
    assert [source.original_line(n) for n in (1, 2, 3, 4)] == [1, 3, 4, 5]  # 4: LibCST's end of file


def test_no_other_module_splits_lines_or_decodes_a_file():
    # The harness reads its own logs and the running program's frames, not files to lint.
    package = pathlib.Path(__file__).parent.parent / "bcast_lint"
    pattern = re.compile(r"splitlines\(|\.decode\(|detect_encoding|_LINE_BREAK|noqa.*re\.compile", re.IGNORECASE)
    offenders = [f"{path.relative_to(package)}:{number}"
                 for path in package.rglob("*.py") if "harness" not in path.parts
                 and path.name not in ("source.py", "noqa.py")
                 for number, line in enumerate(path.read_text().split("\n"), start=1) if pattern.search(line)]
    assert not offenders


# -- a fix the fixer would reject is never offered -------------------------------------------------
NESTED = """\
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast

accelerator = Accelerator()

if accelerator.is_main_process:
    x = None
    if accelerator.is_main_process:
        x = torch.ones(4)
x = broadcast(x)
"""


def _cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bcast_lint", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True)


def test_a_fix_that_leaves_its_finding_is_withheld_and_show_fixes_says_why(tmp_path):
    (tmp_path / "nested.py").write_text(NESTED)
    lint = _cli("--show-fixes", "nested.py", cwd=tmp_path)
    assert "nested.py:11:5: BCL002" in lint.stdout and "fixable" not in lint.stdout, lint.stdout
    assert "nested.py:11:5: BCL002 the fixed code still has the finding" in lint.stdout, lint.stdout
    for option in ("--fix", "--unsafe-fixes"):
        assert "fixable" not in _cli("--fix", option, "nested.py", cwd=tmp_path).stdout
    diff = _cli("--diff", "nested.py", cwd=tmp_path)
    assert diff.returncode == 0 and diff.stdout == ""
    assert (tmp_path / "nested.py").read_text() == NESTED

"""Cutting irrelevant code out keeps every other line as it was, maps it back to its number,
and changes no finding or fix."""

import ast

import pytest

from bcast_lint.engine import lint_source
from bcast_lint.reduce import reduce_source
from tests.fixture_files import identifier, programs

SOURCE = b"""\
import torch.distributed as dist
from accelerate.utils import broadcast as bc


@decorator
def unrelated(x):
\treturn x + 1


class Trainer:
    def log(self):
        print("nothing to see")

    def sync(self, x):
        if dist.get_rank() == 0:
            x = None
        bc(x)


class Empty:
    def only(self):
        pass
"""


def _kept_lines_are_original(source: bytes, reduced) -> None:
    original = source.splitlines(keepends=True)
    lines = reduced.source.splitlines(keepends=True)
    assert len(lines) == len(reduced.line_numbers)
    for line, number in zip(lines, reduced.line_numbers):
        assert line == original[number - 1] or line.lstrip().startswith((b"def ", b"class "))


def test_irrelevant_code_is_cut_and_kept_lines_map_back():
    reduced = reduce_source(SOURCE, ast.parse(SOURCE))
    ast.parse(reduced.source)
    assert b"return x + 1" not in reduced.source and b"def unrelated(): pass\n" in reduced.source
    assert b"nothing to see" not in reduced.source and b"    def log(): pass\n" in reduced.source
    assert reduced.source.count(b"\n") < SOURCE.count(b"\n")
    _kept_lines_are_original(SOURCE, reduced)
    for number, line in enumerate(SOURCE.splitlines(), start=1):
        if b"bc(x)" in line or b"get_rank" in line:
            assert reduced.source.splitlines()[reduced.line_numbers.index(number)] == line


def test_crlf_and_tabs_survive():
    source = SOURCE.replace(b"\n", b"\r\n")
    reduced = reduce_source(source, ast.parse(source))
    assert b"\n" not in reduced.source.replace(b"\r\n", b"")
    ast.parse(reduced.source)
    _kept_lines_are_original(source, reduced)


def test_a_non_ascii_alias_keeps_its_caller():
    source = "from accelerate.utils import broadcast as сбор\n\ndef sync(x):\n    сбор(x)\n".encode()
    assert b"\xd1\x81\xd0\xb1\xd0\xbe\xd1\x80(x)" in reduce_source(source, ast.parse(source)).source


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_reduction_changes_no_finding(program, monkeypatch):
    def with_fixes(result):
        return [(finding, finding.fix) for finding in result.findings]

    reduced = lint_source(program.read_bytes(), str(program))
    monkeypatch.setattr("bcast_lint.engine._reduced", lambda source, tree: (source, None))
    whole = lint_source(program.read_bytes(), str(program))
    assert with_fixes(reduced) == with_fixes(whole)

"""Blanking irrelevant code keeps every line where it was and changes no finding."""

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


def test_irrelevant_code_is_blanked_and_lines_stay_put():
    reduced = reduce_source(SOURCE, ast.parse(SOURCE))
    assert reduced.count(b"\n") == SOURCE.count(b"\n")
    ast.parse(reduced)
    assert b"return x + 1" not in reduced and b"def unrelated(): pass" in reduced
    assert b"nothing to see" not in reduced and b"    def log(): pass" in reduced
    for number, line in enumerate(SOURCE.splitlines(), start=1):
        if b"bc(x)" in line or b"get_rank" in line:
            assert reduced.splitlines()[number - 1] == line


def test_crlf_and_tabs_survive():
    source = SOURCE.replace(b"\n", b"\r\n")
    reduced = reduce_source(source, ast.parse(source))
    assert reduced.count(b"\r\n") == source.count(b"\r\n")
    ast.parse(reduced)


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_reduction_changes_no_finding(program, monkeypatch):
    reduced = lint_source(program.read_bytes(), str(program))
    monkeypatch.setattr("bcast_lint.engine._reduced", lambda source, tree: source)
    assert lint_source(program.read_bytes(), str(program)) == reduced

"""A very large module is linted in parts (bcast_lint.parts): the parts must give the findings and
coverage of the whole, and hold what each function's analysis reads."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bcast_lint import parts
from bcast_lint.engine import lint_source
from bcast_lint.reduce import Reduced
from tests.fixture_files import expected_findings, identifier, programs

# One blind-corpus program in four: the fixtures cover every rule; these add other authors' shapes.
BLIND_CORPORA = sorted(Path(__file__).resolve().parent.joinpath("data").glob("blind*/[!.]*.py"))[::4]


def _whole_and_in_parts(path: Path, monkeypatch) -> tuple:
    data = path.read_bytes()
    whole = lint_source(data, str(path))
    monkeypatch.setattr(parts, "PART_LINES", 1)  # every component a part of its own
    split = lint_source(data, str(path))
    return whole, split


def _assert_same(whole, split) -> None:
    assert split.error == whole.error
    assert split.findings == whole.findings
    assert (split.analysed, sorted(split.unresolved), split.frameworks) == \
        (whole.analysed, sorted(whole.unresolved), whole.frameworks)


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_fixture_in_parts_has_the_findings_of_the_whole(program, monkeypatch):
    # The whole file's findings are its .expected ones (test_fixtures checks that).
    monkeypatch.setattr(parts, "PART_LINES", 1)  # every component a part of its own
    result = lint_source(program.read_bytes(), str(program))
    assert result.error is None
    assert [f"{f.line}:{f.column} {f.code} {f.message}" for f in result.findings] == expected_findings(program)


@pytest.mark.slow
@pytest.mark.parametrize("program", BLIND_CORPORA, ids=identifier)
def test_blind_program_in_parts_has_the_findings_of_the_whole(program, monkeypatch):
    _assert_same(*_whole_and_in_parts(program, monkeypatch))


MODULE = '''\
import torch.distributed as dist

RANK = dist.get_rank()


def helper(x):
    dist.all_reduce(x)


def caller(x):
    if RANK == 0:
        helper(x)


def alone(x):
    if RANK == 0:
        dist.barrier()


class Base:
    pass


class Child(Base):
    def step(self, x):
        dist.broadcast(x, 0)


if __name__ == "__main__":
    alone(1)
'''


def _uncut(text: str) -> Reduced:
    lines = tuple(line + "\n" for line in text.split("\n")[:-1])
    return Reduced(lines, tuple(range(1, len(lines) + 1)))


def _split(text: str, monkeypatch) -> tuple[list[str], frozenset]:
    monkeypatch.setattr(parts, "PART_LINES", 1)
    reduced = _uncut(text)
    pieces, frame = parts.split(reduced, ast.parse(text))
    return [piece.text for piece in pieces], frame


def test_callers_callees_bases_and_module_code_stay_with_what_they_name(monkeypatch):
    texts, frame = _split(MODULE, monkeypatch)
    assert len(texts) == 3
    assert "def helper" in texts[0] and "def caller" in texts[0]
    assert "def alone" in texts[1] and "alone(1)" in texts[1]
    assert "class Base" in texts[2] and "class Child" in texts[2]
    assert all("RANK = dist.get_rank()" in text and "import torch.distributed" in text for text in texts)
    assert {1, 3} <= frame and 7 not in frame
    for text in texts:
        ast.parse(text)


def test_a_global_written_by_a_function_ties_its_readers_to_it(monkeypatch):
    text = ("STATE = None\n\n\ndef load():\n    global STATE\n    STATE = 1\n\n\n"
            "def use():\n    return STATE\n\n\ndef other():\n    return 2\n")
    texts, _ = _split(text, monkeypatch)
    assert len(texts) == 2
    assert "def load" in texts[0] and "def use" in texts[0]


def test_a_small_module_stays_whole():
    reduced = _uncut(MODULE)
    assert parts.split(reduced, ast.parse(MODULE)) == ([reduced], frozenset())

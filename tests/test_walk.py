"""The fast read-only walk sees the same nodes, in the same order, as LibCST's own visit."""

from __future__ import annotations

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings

from bcast_lint.analysis.walk import _SYNTAX_TOKENS, Visitor, children
from tests.fixture_files import FIXTURES, identifier

ALL_FIXTURE_SOURCES = sorted(FIXTURES.glob("*/[!.]*.py"))


def _mismatches(node: cst.CSTNode) -> list[str]:
    """Nodes whose fast children differ from LibCST's children less the syntax tokens."""
    expected = [child for child in node.children if not isinstance(child, _SYNTAX_TOKENS)]
    found = [] if list(children(node)) == expected else [type(node).__name__]
    for child in node.children:
        found += _mismatches(child)
    return found


@pytest.mark.parametrize("path", ALL_FIXTURE_SOURCES, ids=identifier)
def test_children_match_libcst_on_fixtures(path):
    assert _mismatches(cst.parse_module(path.read_bytes())) == []


class _NoHandlers(Visitor):
    """Enters every node: Visitor.walk inlines children() for speed, so it is checked apart."""


def _preorder(node: cst.CSTNode) -> list[cst.CSTNode]:
    return [node, *(found for child in children(node) for found in _preorder(child))]


@pytest.mark.parametrize("path", ALL_FIXTURE_SOURCES, ids=identifier)
def test_visitor_walk_enters_the_same_nodes_as_children(path, monkeypatch):
    module = cst.parse_module(path.read_bytes())
    entered: list[cst.CSTNode] = []
    walk = Visitor.walk
    monkeypatch.setattr(Visitor, "walk", lambda self, node: (entered.append(node), walk(self, node)))
    _NoHandlers().walk(module)
    assert [id(node) for node in entered] == [id(node) for node in _preorder(module)]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_children_match_libcst_on_generated_code(code):
    assert _mismatches(cst.parse_module(code)) == []


SOURCE = """\
@decorate
async def f(a, /, b=1, *args, c, **kw) -> int:
    async with open(a) as handle:
        pass
    async for item in (x for x in y if x):
        g(key=value)
    try:
        pass
    except Exception as error:
        pass
    return b if c else d
"""


class _Recorder(Visitor):
    def __init__(self) -> None:
        self.events: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.events.append(node.value)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.events.append("end of " + node.name.value)


def test_visitor_sees_names_in_source_order():
    recorder = _Recorder()
    recorder.walk(cst.parse_module(SOURCE))
    assert recorder.events == [
        "decorate", "f", "a", "b", "args", "c", "kw", "int", "open", "a", "handle",
        "item", "x", "x", "y", "x", "g", "key", "value", "Exception", "error",
        "b", "c", "d", "end of f",
    ]


def test_visit_returning_false_skips_the_children():
    recorder = _Recorder()
    recorder.walk(cst.parse_module("f(lambda q: q)\n"))
    assert recorder.events == ["f"]


def _subclasses(base: type) -> set[type]:
    found = set(base.__subclasses__())
    return found.union(*(_subclasses(sub) for sub in found))


def test_the_candidate_collector_tracks_every_kind_of_statement():
    from bcast_lint.analysis.module import _CandidateCollector

    kinds = _subclasses(cst.BaseCompoundStatement) | {cst.SimpleStatementLine, cst.SimpleStatementSuite}
    for kind in kinds:
        assert hasattr(_CandidateCollector, f"visit_{kind.__name__}"), kind
        assert hasattr(_CandidateCollector, f"leave_{kind.__name__}"), kind

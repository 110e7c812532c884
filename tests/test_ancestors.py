"""ModuleAnalysis.ancestors: every node from a call's scope down to its parent, whatever the nesting."""

from __future__ import annotations

import libcst as cst
import pytest

from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.analysis.walk import children
from tests.fixture_files import identifier, programs


def _full_path(node: cst.CSTNode, target: cst.CSTNode, above: tuple = ()):
    """The reference answer: a plain recursive search of the whole tree."""
    for child in children(node):
        if child is target:
            return (*above, node)
        found = _full_path(child, target, (*above, node))
        if found is not None:
            return found
    return None


def _check(source: str) -> int:
    module = cst.parse_module(source)
    analysis = ModuleAnalysis(module, "a.py")
    for site in analysis.calls:
        expected = _full_path(module, site.call)
        start = next(i for i, node in enumerate(expected) if node is site.scope)
        assert analysis.ancestors(site) == expected[start:]
    return len(analysis.calls)


def test_nested_blocks_arms_and_expressions():
    source = """\
import torch.distributed as dist
def f(x, rank):
    for i in range(3):
        if rank == 0:
            pass
        elif rank == 1:
            try:
                y = [dist.broadcast(t, 0) for t in x] if i else None
            except OSError:
                dist.barrier()
        else:
            with open("p") as handle:
                dist.all_reduce(x)
dist.barrier()
"""
    assert _check(source) == 4


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_fixture_programs(program):
    _check(program.read_text(encoding="utf-8"))

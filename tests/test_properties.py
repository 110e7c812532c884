"""Property tests (issue 8): whatever valid Python bcast-lint is given, linting never raises, the
flake8 plugin never raises, and `--fix --unsafe-fixes` gives code that compiles, is a fixed point,
has no finding that was not in the original, and has no finding left whose fix was offered.

Two sources of programs: ones composed from the broadcast patterns the analysis knows
(tests/strategies.py), which exercise the rules and their fixes, and arbitrary valid Python from
hypothesmith with a broadcast appended, which exercises the parser, the pre-filter and the
analysis' walk over syntax nobody thought of. Example counts are kept moderate so the suite runs
in a minute or two on a busy machine.
"""

from __future__ import annotations

import ast
from collections import Counter

import hypothesmith
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bcast_lint.engine import lint_source
from bcast_lint.fixer import applicable, fix_source
from bcast_lint.flake8_plugin import BcastLintPlugin
from tests.strategies import HEADER, broadcast_programs

# Generating programs is the slow part, not linting them; the strategies are deliberately large.
_SETTINGS = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# hypothesmith's grammar-driven programs are slow to generate and often filtered; fewer of them.
_GRAMMAR_SETTINGS = settings(max_examples=30, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                    HealthCheck.data_too_large])
_BROADCAST_TAIL = "\nimport torch.distributed as dist\ndist.broadcast(x, 0)\n"


def _everything(code: str) -> bool:
    return True


def _check_lint(source: str, filename: str = "generated.py") -> None:
    result = lint_source(source.encode("utf-8"), filename)
    assert result.error is None, result.error
    line_count = max(1, len(source.splitlines()))
    for finding in result.findings:
        assert 1 <= finding.line <= finding.end_line <= line_count + 1, finding
        assert finding.column >= 1, finding


def _check_plugin(source: str) -> None:
    lines = source.splitlines(keepends=True)
    plugin = BcastLintPlugin(ast.parse(source), "generated.py", lines)
    for line, column, message, _ in plugin.run():
        assert line >= 1 and column >= 0 and message.startswith("BCL")


def _check_fix(source: str) -> None:
    """What protects the user's file: the result compiles and a second --fix changes nothing."""
    data = source.encode("utf-8")
    once = fix_source(data, "generated.py", _everything, unsafe=True)
    # The fixer withholds a fix that would not compile; a rule that offers one has a bug.
    broken = [f.fix_rejected for f in once.original.findings if "compile" in (f.fix_rejected or "")]
    assert not broken, broken
    compile(once.source, "generated.py", "exec", dont_inherit=True)
    twice = fix_source(once.source, "generated.py", _everything, unsafe=True)
    assert twice.source == once.source, "fixing a fixed file changed it again"
    assert not twice.applied


def _check_fix_quality(source: str) -> None:
    """What the rules promise: every offered fix removes its finding, and none adds a finding."""
    data = source.encode("utf-8")
    before = lint_source(data, "generated.py")
    once = fix_source(data, "generated.py", _everything, unsafe=True)
    stuck = [f"{f.line}:{f.column} {f.code}" for f in once.remaining.findings if applicable(f, unsafe=True)]
    assert not stuck, f"offered fixes that do not remove their finding: {stuck}"
    new = Counter(f.code for f in once.remaining.findings) - Counter(f.code for f in before.findings)
    assert not new, f"the fix introduced {dict(new)}:\n{once.source.decode()}"


@pytest.mark.slow
@pytest.mark.timeout(600)
@_SETTINGS
@given(broadcast_programs())
def test_generated_broadcast_programs_compile(source):
    compile(source, "generated.py", "exec", dont_inherit=True)


@pytest.mark.slow
@pytest.mark.timeout(600)
@_SETTINGS
@given(broadcast_programs())
@example(HEADER + "x = None\nif accelerator.is_main_process:\n    x = torch.randn(4)\nbroadcast(x)\n")
def test_linting_broadcast_programs_never_raises(source):
    _check_lint(source)


@pytest.mark.slow
@pytest.mark.timeout(600)
@_SETTINGS
@given(broadcast_programs())
def test_flake8_plugin_on_broadcast_programs_never_raises(source):
    _check_plugin(source)


@pytest.mark.slow
@pytest.mark.timeout(600)
@_SETTINGS
@given(broadcast_programs())
@example(HEADER + "x = torch.empty(4, device='cuda:0')\nif rank == 0:\n    x = torch.randn(4)\n"
                  "x = dist.broadcast(x, 0)\n")
def test_fix_compiles_and_is_idempotent(source):
    _check_fix(source)


# Rule bugs this property found (issue 8). The fixer now checks every fix before offering it and
# withholds one that leaves its finding or adds one (issue 12), so the properties hold on these
# whatever the rules do.
KNOWN_FIX_BUGS = {
    # BCL002's safe fix assigns a placeholder before the `if`, which `del` then unbinds again.
    "BCL002 del in a rank branch": (
        "import torch\nimport torch.distributed as dist\nfrom accelerate.utils import broadcast\n"
        "if dist.get_rank() == 0:\n    del objs\nelse:\n    objs = torch.zeros(4)\n"
        "objs = broadcast(objs, from_process=1)\n"),
    # BCL003's fix turns torch.Tensor(4) into torch.zeros(4), and only then does BCL007 see the
    # shape/dtype mismatch it should have reported for torch.Tensor(4) in the first place.
    "BCL007 misses torch.Tensor(n)": (
        "import torch\nimport torch.distributed as dist\nfrom accelerate.utils import broadcast\n"
        "if dist.get_rank() == 1:\n    objs = torch.rand(3).long()\nelse:\n    objs = torch.Tensor(4)\n"
        "broadcast(objs)\n"),
    # BCL008's fix turns rank 0's dist.broadcast into broadcast_object_list, while the other ranks'
    # dist.broadcast in the other arm (its partner) is left alone: BCL005 then reports both.
    "BCL008 fix splits a partnered collective": (
        "import torch.distributed as dist\n\nif dist.get_rank() != 0:\n    dist.broadcast(buf, 0)\n"
        "else:\n    objs = [None]\nif accelerator.is_main_process:\n    dist.broadcast(objs, src=0)\n"),
}


@pytest.mark.parametrize("source", KNOWN_FIX_BUGS.values(), ids=KNOWN_FIX_BUGS.keys())
def test_known_fix_bugs(source):
    _check_fix(source)  # what protects the file holds even here
    _check_fix_quality(source)


@pytest.mark.slow
@pytest.mark.timeout(600)
@_SETTINGS
@given(broadcast_programs())
def test_fixes_remove_their_finding_and_add_none(source):
    _check_fix_quality(source)


@pytest.mark.slow
@pytest.mark.timeout(600)
@_GRAMMAR_SETTINGS
# deferred: building the grammar costs a second of CPU, which every test process would pay at import
@given(st.deferred(lambda: hypothesmith.from_grammar()).map(lambda code: code + _BROADCAST_TAIL))
def test_linting_arbitrary_python_never_raises(source):
    _check_lint(source)
    _check_plugin(source)
    _check_fix(source)


@pytest.mark.slow
@pytest.mark.timeout(600)
@_GRAMMAR_SETTINGS
@given(hypothesmith.from_node().map(lambda code: code + _BROADCAST_TAIL))
def test_linting_libcst_generated_python_never_raises(source):
    # from_node builds LibCST trees, so it reaches constructs (decorators, match, walrus, lambdas
    # in odd places) that the grammar strategy rarely does.
    _check_lint(source)
    _check_plugin(source)
    _check_fix(source)


@_SETTINGS
@given(st.binary(max_size=300).map(lambda data: data + _BROADCAST_TAIL.encode()))
def test_linting_arbitrary_bytes_never_raises(data):
    result = lint_source(data, "noise.py")
    assert result.error is not None or all(f.line >= 1 for f in result.findings)

"""analysis.raising: which parameters of a function can make it raise uncaught, and on which line first."""

from __future__ import annotations

import textwrap

import pytest

from bcast_lint.analysis.project import Project
from bcast_lint.analysis.raising import failing_parameters

MODULE = """\
import json


def bucket(n):
    for b in (64, 128):
        if n <= b:
            return b
    raise ValueError(n)


def estimate(lengths, micro):
    return micro * bucket(max(lengths))


def guarded(lengths, micro):
    try:
        cost = estimate(lengths, micro)
    except ValueError:
        cost = 0
    return cost


def checked(rows, limit):
    assert len(rows) < limit
    return rows


def loaded(path, default):
    with open(path) as f:
        return json.load(f)


def validated(mode, rows):
    if mode not in ("a", "b"):
        raise ValueError(mode)
    return rows


def reraised(lengths):
    try:
        return estimate(lengths, 1)
    except ValueError:
        raise


class Planner:
    def plan(self, lengths):
        total = 0
        return self.cost(lengths) + total

    def cost(self, lengths):
        return estimate(lengths, 2)
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    path = tmp_path_factory.mktemp("raising") / "plans.py"
    path.write_text(textwrap.dedent(MODULE))
    project = Project()
    return project, project.index(str(path))


@pytest.mark.parametrize("name, expected", [
    ("bucket", {"n": 4}),  # the raise after the loop whose test reads `n`
    ("estimate", {"lengths": 1}),  # through bucket(max(lengths)); `micro` reaches no raise
    ("guarded", {}),  # the handler carries on
    ("checked", {"rows": 1, "limit": 1}),  # an assert on both
    ("loaded", {"path": 1}),  # a read of the file it names
    ("validated", {"mode": 2}),  # a raise after a test on `mode` only
    ("reraised", {"lengths": 2}),  # a handler that raises again catches nothing
    ("Planner.plan", {"lengths": 2}),  # through a method of its own class
])
def test_failing_parameters(index, name, expected):
    project, module = index
    parameters, failing = failing_parameters(project, module, module.functions[name])
    assert failing == expected
    assert set(failing) <= set(parameters)
    assert "self" not in parameters

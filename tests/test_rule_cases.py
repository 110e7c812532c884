"""Every rule's own VALID and INVALID examples, run through the real engine and fixer."""

from __future__ import annotations

import pytest

from bcast_lint.engine import lint_source
from bcast_lint.fixer import fix_source
from bcast_lint.codes import RULES
from bcast_lint.rules.base import EXAMPLE_PRELUDE

ALL_RULES = tuple(spec.load() for spec in RULES)


def _cases(kind: str) -> list:
    return list(_each_case(kind))


def _each_case(kind: str):
    for rule in ALL_RULES:
        for index, case in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, case, id=f"{rule.code}-{kind.lower()}-{index}")


def _only(rule):
    return lambda code: code == rule.code


def _lint(rule, code: str):
    source = (EXAMPLE_PRELUDE + code + "\n").encode()
    return lint_source(source, "case.py", _only(rule))


def test_every_rule_has_cases_both_ways():
    for rule in ALL_RULES:
        assert rule.VALID and rule.INVALID, rule.code


@pytest.mark.parametrize(("rule", "case"), _cases("VALID"))
def test_valid_case_is_not_flagged(rule, case):
    result = _lint(rule, case.code)
    assert result.error is None
    assert [f.message for f in result.findings] == []


PRELUDE_LINES = EXAMPLE_PRELUDE.count("\n")


def _range(finding) -> tuple[int, int, int, int]:
    """The finding's range counted in the case's own lines, as Invalid.range is."""
    return (finding.line - PRELUDE_LINES, finding.column, finding.end_line - PRELUDE_LINES,
            finding.end_column)


@pytest.mark.parametrize(("rule", "case"), _cases("INVALID"))
def test_invalid_case_is_flagged_with_its_message_and_range(rule, case):
    result = _lint(rule, case.code)
    assert result.error is None
    assert [f.code for f in result.findings] == [rule.code]
    finding = result.findings[0]
    assert (finding.message, _range(finding)) == (case.expected_message, case.range)
    assert ";" not in finding.message, "the message says what is wrong in one sentence"
    assert finding.help and finding.help[0].isupper(), "every finding says what to do, as a sentence"


@pytest.mark.parametrize(("rule", "case"), _cases("INVALID"))
def test_invalid_case_fix(rule, case):
    source = (EXAMPLE_PRELUDE + case.code + "\n").encode()
    outcome = fix_source(source, "case.py", _only(rule), unsafe=True)
    assert not [f.fix_rejected for f in outcome.original.findings if f.fix_rejected]
    expected = case.code if case.expected_replacement is None else case.expected_replacement
    assert outcome.source.decode() == EXAMPLE_PRELUDE + expected + "\n"

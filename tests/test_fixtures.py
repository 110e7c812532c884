"""Realistic programs under fixtures/: exact findings, exact fixes, and corrected versions clean."""

from __future__ import annotations

import pytest

from bcast_lint.codes import RULES_BY_CODE
from bcast_lint.engine import lint_source
from bcast_lint.fixer import fix_source
from tests.fixture_files import (expected_findings, fixed_version, hand_fixed_versions, identifier,
                                 programs)


def _summary(result) -> list[str]:
    return [f"{f.line}:{f.column} {f.code} {f.message}" for f in result.findings]


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_findings_match_expected(program):
    result = lint_source(program.read_bytes(), str(program))
    assert result.error is None
    assert _summary(result) == expected_findings(program)


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_fix_gives_the_fixed_file(program):
    outcome = fix_source(program.read_bytes(), str(program), lambda code: True, unsafe=True)
    assert not [f.fix_rejected for f in outcome.original.findings if f.fix_rejected]
    fixed = fixed_version(program)
    expected = fixed.read_bytes() if fixed.exists() else program.read_bytes()
    assert outcome.source.decode() == expected.decode()


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_fix_is_idempotent(program):
    once = fix_source(program.read_bytes(), str(program), lambda code: True, unsafe=True)
    twice = fix_source(once.source, str(program), lambda code: True, unsafe=True)
    assert twice.source == once.source
    assert not [f for f in twice.remaining.findings if f.fix is not None]


@pytest.mark.parametrize("version", hand_fixed_versions(), ids=identifier)
def test_hand_fixed_version_is_clean(version):
    result = lint_source(version.read_bytes(), str(version))
    assert result.error is None
    assert _summary(result) == []


def test_every_rule_has_fixtures():
    codes_with_fixtures = {program.parent.name for program in programs()}
    assert set(RULES_BY_CODE) <= codes_with_fixtures


def test_a_very_long_file_is_linted_once_and_keeps_the_fixes_that_compile(monkeypatch):
    """Over fixer.RELINT_CHECK_LINES lines, a plain lint checks its fixes by compiling them, without
    a second lint; on the fixtures, whose fixes all pass the full check, it keeps the same fixes."""
    from bcast_lint import fixer

    programs_with_fixes = [p for p in programs() if fixed_version(p).exists()][:12]
    full = {p: fixer.lint_checked(p.read_bytes(), str(p), lambda code: True) for p in programs_with_fixes}
    linted = []
    monkeypatch.setattr(fixer, "RELINT_CHECK_LINES", 0)
    monkeypatch.setattr(fixer, "lint_source", lambda *args, **kwargs: linted.append(1) or lint_source(*args, **kwargs))
    for program in programs_with_fixes:
        linted.clear()
        result = fixer.lint_checked(program.read_bytes(), str(program), lambda code: True)
        assert len(linted) == 1, program
        assert [f.fix for f in result.findings] == [f.fix for f in full[program].findings], program
        assert any(f.fix for f in result.findings), program

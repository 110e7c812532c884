"""The generated documentation matches the rules' docstrings, and every rule documents itself."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bcast_lint.codes import RULES

ROOT = Path(__file__).resolve().parent.parent
ALL_RULES = tuple(spec.load() for spec in RULES)
SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety")


def test_generated_docs_are_up_to_date():
    result = subprocess.run([sys.executable, "scripts/generate_docs.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + "\nrun: python scripts/generate_docs.py"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_rule_documents_every_section_in_order(rule):
    positions = [rule.documentation().find(section) for section in SECTIONS]
    assert -1 not in positions, f"{rule.code} lacks {SECTIONS[positions.index(-1)]}"
    assert positions == sorted(positions)
    assert re.fullmatch(r"BCL\d{3}", rule.code) and rule.summary()


def test_rule_command_prints_the_documentation():
    from bcast_lint.cli import main

    for rule in ALL_RULES:
        assert main(["rule", rule.code.lower()]) == 0
    assert main(["rule", "BCL999"]) == 2


@pytest.mark.parametrize("spec", RULES, ids=lambda spec: spec.code)
def test_summary_is_one_whole_sentence(spec):
    summary = spec.load().summary()
    assert summary.startswith("Flags ") and summary.endswith(".") and "\n" not in summary


def _summary_of(what_it_does: str) -> str:
    from bcast_lint.rules.base import first_sentence_of_what_it_does

    return first_sentence_of_what_it_does(f"## What it does\n{what_it_does}\n\n## Why is this bad?\nIt is.")


def test_summary_extraction():
    # The first sentence only; a stop inside `code` ends nothing.
    assert _summary_of("Flags `a.b` calls. Also more.") == "Flags `a.b` calls."
    # A lead-in ending in a colon is the sentence, not cut at the colon.
    assert _summary_of("Flags a copy, or a view laid out\nlike this:\n\n- `x.t()`;\n- `x[:, 0]`.") == (
        "Flags a copy, or a view laid out like this.")
    # A sentence that runs on into a list ends at its full stop.
    assert _summary_of("Flags a gather of\n\n- a mask: `x[m]`;\n- `nonzero`;\n\nor those converted.\n"
                       "Not others.") == "Flags a gather of a mask: `x[m]`; `nonzero`; or those converted."

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


def test_the_prefilter_is_described_in_one_place_from_its_own_word_lists():
    """The README and BCL900's page show the same generated description, which names every word
    the pre-filter looks for; the README's older, shorter claims are gone."""
    from bcast_lint import prefilter
    from bcast_lint.docs import SYNTAX_ERROR_DOCUMENTATION, prefilter_description

    text = prefilter_description()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(text.rstrip("\n")) == 1
    assert text in (ROOT / "docs" / "rules" / "BCL900.md").read_text(encoding="utf-8")
    assert text in SYNTAX_ERROR_DOCUMENTATION  # `bcast-lint rule BCL900`
    words = (*prefilter.API_WORDS, *prefilter.BROADCAST_WORDS, *prefilter.RANK_WORDS, *prefilter.OTHER_CALL_WORDS)
    for word in words:
        assert f"`{word.decode() if isinstance(word, bytes) else word}`" in text, word
    assert "name a distributed API and call a collective" not in readme
    assert "names a distributed API and calls a collective" not in readme


@pytest.mark.parametrize("source, parsed", [
    ("import torch.distributed as dist\ndist.all_reduce(t)\n", False),  # a collective, no rank word
    ("import torch.distributed as dist\nif dist.get_rank() == 0:\n    dist.all_reduce(t)\n", True),
    ("import torch.distributed as dist\ndist.broadcast(t, 0)\n", True),  # a broadcast needs no rank word
    ("import torch\nif rank == 0:\n    broadcast(t)\n", False),  # no API word
    ("import torch.distributed as dist\nmy_broadcast(t)\n", False),  # not the start of a word
])  # fmt: skip
def test_the_prefilter_does_what_its_description_says(source, parsed):
    from bcast_lint.prefilter import PARSE, verdict

    assert (verdict(source.encode()) == PARSE) is parsed

"""Every text scan reads one module's words (analysis.words): the pre-filter, the project index,
the engine's cut, the file context and the summaries agree on what calls a collective and what
names a rank."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from bcast_lint import prefilter
from bcast_lint.analysis import words
from bcast_lint.analysis.apis import GATED_CALL_WORDS
from bcast_lint.analysis.context import _called_words
from bcast_lint.reduce import reduce_source
from bcast_lint.source import Source

PACKAGE = Path(__file__).resolve().parent.parent / "bcast_lint"
SCANS = ("prefilter.py", "reduce.py", "analysis/project.py", "analysis/context.py", "analysis/summaries.py")
CATALOGUE_LISTS = {"CALL_WORDS", "RANK_TEXT_WORDS", "API_TEXT_WORDS"}


def _program(call: str, condition: str = "get_rank() == 0", imports: str = "import torch.distributed as dist\n") -> str:
    return f"{imports}\n\ndef f(x, t):\n    if {condition}:\n        {call}\n"


def _kept_by_the_cut(text: str) -> bool:
    source = Source.from_text(text)
    return "def f(x, t):\n" in reduce_source(source, ast.parse(text)).text


@pytest.mark.parametrize("word", sorted(words.COLLECTIVE_WORDS))
def test_every_scan_sees_a_call_of_each_collective_word(word):
    text = _program(f"x.{word}(t)")
    assert prefilter.verdict(text.encode()) == prefilter.PARSE
    assert words.names_collective(text) and words.names_collective(text.encode())
    assert words.mentions_collective(text.encode())
    assert _kept_by_the_cut(text)
    assert word in _called_words(text)


@pytest.mark.parametrize(("module", "word"), sorted((m, w) for m, found in GATED_CALL_WORDS.items()
                                                    for w in found if w not in words.COLLECTIVE_WORDS))
def test_a_gated_word_counts_in_every_scan_only_where_its_module_is_named(module, word):
    # The comment names a distributed API for the pre-filter, but no module.
    named = _program(f"x.{word}(t)", imports=f"# distributed\nimport {module}\n")
    unnamed = _program(f"x.{word}(t)", imports="# distributed\n")
    assert prefilter.verdict(named.encode()) == prefilter.PARSE
    assert words.names_collective(named) and words.names_collective(named.encode())
    assert _kept_by_the_cut(named)
    assert prefilter.verdict(unnamed.encode()) != prefilter.PARSE
    assert not words.names_collective(unnamed) and not words.names_collective(unnamed.encode())
    assert not _kept_by_the_cut(unnamed)


@pytest.mark.parametrize("word", words.RANK_WORDS)
def test_every_scan_sees_each_rank_word(word):
    text = _program("helper(t)", condition=f"state.{word}")
    assert words.names_rank(text) and words.names_rank(text.encode())
    assert prefilter.verdict(text.encode()) == prefilter.IF_HELPERS


def test_a_text_without_a_rank_word_names_none():
    text = _program("helper(t)", condition="state.ready")
    assert not words.names_rank(text) and not words.names_rank(text.encode())
    assert prefilter.verdict(text.encode()) == prefilter.SKIP


@pytest.mark.parametrize("path", SCANS)
def test_scans_take_their_words_from_the_words_module(path):
    tree = ast.parse((PACKAGE / path).read_text(encoding="utf-8"))
    from_catalogue = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                      and node.module == "bcast_lint.analysis.apis" for alias in node.names}
    assert from_catalogue.isdisjoint(CATALOGUE_LISTS), textwrap.shorten(str(from_catalogue), 200)


def test_the_cut_keeps_every_deferring_call_the_hooks_read():
    from bcast_lint.analysis import hooks

    assert hooks.DEFERRALS.keys() == words.DEFERRING_CALLS
    assert hooks.REGISTRATIONS == words.HOOK_REGISTRATIONS


@pytest.mark.parametrize(("text", "unseeded"), [
    ("import random\nif __name__ == '__main__':\n    torch.manual_seed(0)\n", {"random", "numpy.random"}),
    ("import random\nif __name__ == '__main__':\n    random.seed(0)\n", {"numpy.random"}),
    ("if __name__ == '__main__':\n    np.random.seed(1)\n    random.seed(0)\n", set()),
    ("if __name__ == '__main__':\n    L.seed_everything(7)\n", set()),  # frameworks seed all of them
    ("import random\ndef draw():\n    return random.random()\n", set()),  # a library: whoever runs it seeds
])
def test_unseeded_generators_of_a_script(text, unseeded):
    assert words.unseeded_generators(text) == unseeded

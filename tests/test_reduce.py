"""Cutting irrelevant code out keeps every other line as it was, maps it back to its number,
and changes no finding or fix."""

import ast

import pytest

from bcast_lint.engine import lint_source
from bcast_lint.reduce import reduce_source
from bcast_lint.source import Source
from tests.fixture_files import identifier, programs

SOURCE = """\
import torch.distributed as dist
from accelerate.utils import broadcast as bc


@decorator
def unrelated(x):
\treturn x + 1


class Trainer:
    def log(self):
        print("nothing to see")

    def sync(self, x):
        if dist.get_rank() == 0:
            x = None
        bc(x)


class Empty:
    def only(self):
        pass
"""


def _reduce(text: str):
    return reduce_source(Source.from_bytes(text.encode()), ast.parse(text))


def _kept_lines_are_original(text: str, reduced) -> None:
    original = Source.from_text(text).lines()
    lines = Source.from_text(reduced.text).lines()
    assert len(lines) == len(reduced.line_numbers)
    for line, number in zip(lines, reduced.line_numbers):
        assert line == original[number - 1] or line.lstrip().startswith(("def ", "class "))


def test_irrelevant_code_is_cut_and_kept_lines_map_back():
    reduced = _reduce(SOURCE)
    ast.parse(reduced.text)
    assert "return x + 1" not in reduced.text and "def unrelated(): pass\n" in reduced.text
    assert "nothing to see" not in reduced.text and "    def log(): pass\n" in reduced.text
    assert reduced.text.count("\n") < SOURCE.count("\n")
    _kept_lines_are_original(SOURCE, reduced)
    for number, line in enumerate(SOURCE.split("\n"), start=1):
        if "bc(x)" in line or "get_rank" in line:
            assert reduced.text.split("\n")[reduced.line_numbers.index(number)] == line


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_cr_and_tabs_survive(newline):
    source = SOURCE.replace("\n", newline)
    reduced = _reduce(source)
    assert all(line.endswith(newline) for line in Source.from_text(reduced.text).lines())
    ast.parse(reduced.text)
    _kept_lines_are_original(source, reduced)


def test_characters_splitlines_breaks_on_are_not_line_ends():
    source = SOURCE.replace("nothing to see", "nothing\x0c\x1c\x85\u2028 to see")
    reduced = _reduce(source)
    assert reduced.line_numbers == _reduce(SOURCE).line_numbers
    _kept_lines_are_original(source, reduced)


def test_a_form_feed_before_a_method_keeps_its_stub_in_the_class():
    source = SOURCE.replace("    def log(self):", "\x0c    def log(self):")
    reduced = _reduce(source)
    assert "\x0c    def log(): pass\n" in reduced.text
    ast.parse(reduced.text)


def test_a_non_ascii_alias_keeps_its_caller():
    reduced = _reduce("from accelerate.utils import broadcast as сбор\n\ndef sync(x):\n    сбор(x)\n")
    assert "сбор(x)" in reduced.text


@pytest.mark.parametrize("program", programs(), ids=identifier)
def test_reduction_changes_no_finding(program, monkeypatch):
    def with_fixes(result):
        return [(finding, finding.fix) for finding in result.findings]

    reduced = lint_source(program.read_bytes(), str(program))
    monkeypatch.setattr("bcast_lint.engine._parts", lambda source, tree, helpers: ([(source.text, source)], frozenset()))
    whole = lint_source(program.read_bytes(), str(program))
    assert with_fixes(reduced) == with_fixes(whole)


ATTRIBUTES = """\
import torch.distributed as dist


class Syncer:
    def __init__(self):
        if dist.get_rank() == 0:
            self.weights = load()

    def setup_cache(self):
        self.cache = {}

    def refresh(self):
        self.weights = reload()

    def log(self):
        print(self.weights)

    def sync(self):
        dist.broadcast(self.weights, 0)
"""


def test_a_kept_class_keeps_its_setup_methods_and_those_assigning_a_broadcast_attribute():
    reduced = _reduce(ATTRIBUTES)
    assert "self.weights = load()" in reduced.text  # __init__
    assert "self.cache = {}" in reduced.text  # setup_cache: a setup method
    assert "self.weights = reload()" in reduced.text  # refresh: assigns what sync() sends
    assert "print(self.weights)" not in reduced.text and "    def log(): pass\n" in reduced.text
    _kept_lines_are_original(ATTRIBUTES, reduced)


def test_a_kept_class_keeps_its_properties():
    reduced = _reduce(ATTRIBUTES.replace("    def log(self):", "    @property\n    def is_main(self):\n"
                                         "        return self.rank == 0\n\n    def log(self):"))
    assert "return self.rank == 0" in reduced.text  # a property may be the rank test a method reads
    assert "print(self.weights)" not in reduced.text


def test_a_decorator_is_kept_with_its_wrapper_and_a_plain_function_is_cut():
    reduced = _reduce(ATTRIBUTES + "\n\ndef main_only(fn):\n    def wrapper(*args):\n        if rank == 0:\n"
                      "            return fn(*args)\n    return wrapper\n\n\ndef helper(fn):\n    return fn + 1\n")
    assert "            return fn(*args)" in reduced.text  # it may run what it wraps on some ranks only
    assert "def helper(): pass" in reduced.text


def test_a_class_the_kept_code_constructs_is_kept_whole_and_one_it_does_not_is_cut():
    text = ("import os\nimport torch.distributed as dist\n\n\nclass RunDir:\n    def __init__(self, path):\n"
            "        self.path = path\n\n    def created(self):\n        return os.path.exists(self.path)\n\n\n"
            "class Unused:\n    def f(self):\n        return 1\n\n\n"
            "def main():\n    run = RunDir('/tmp/x')\n    if run.created():\n        dist.barrier()\n")
    reduced = _reduce(text)
    assert "        return os.path.exists(self.path)" in reduced.text  # what main() reads of it
    assert "        return 1" not in reduced.text
    _kept_lines_are_original(text, reduced)


def test_a_kept_method_keeps_the_methods_it_calls_on_self_and_theirs():
    text = ("import torch.distributed as dist\n\n\nclass Setup:\n    def _load(self):\n        return 3\n\n"
            "    def _payload(self):\n        return [self._load()]\n\n    def log(self):\n        print('x')\n\n"
            "    def share(self):\n        payload = self._payload()\n        dist.broadcast_object_list(payload)\n")
    reduced = _reduce(text)
    assert "        return [self._load()]" in reduced.text  # called by share(), which broadcasts
    assert "        return 3" in reduced.text  # called by _payload()
    assert "print('x')" not in reduced.text
    _kept_lines_are_original(text, reduced)


def _kept_with_helpers(text: str) -> str:
    from bcast_lint.analysis.context import file_context
    from bcast_lint.analysis.module import run_summaries
    from bcast_lint.analysis.project import Project

    source, tree = Source.from_text(text), ast.parse(text)
    context = file_context(run_summaries(Project()), "case.py", source, tree)
    return reduce_source(source, tree, context.helper_words()).text


@pytest.mark.parametrize("gather, kept", [("torch.gather(x, 1, index)", False), ("x.gather(-1, index)", False),
                                          ("dist.gather(x, gather_list, dst=0)", True)])
def test_a_function_that_gathers_only_to_index_is_no_helper_of_its_callers(gather, kept):
    text = (f"import torch\nimport torch.distributed as dist\n\n\ndef pick(x, index, gather_list=None):\n"
            f"    return {gather}\n\n\ndef score(batch, index):\n    scores = pick(batch, index)\n"
            f"    return scores.sum()\n\n\ndef main(t):\n    dist.broadcast(t, 0)\n")
    assert ("    scores = pick(batch, index)" in _kept_with_helpers(text)) is kept

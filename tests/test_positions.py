"""analysis.positions records where each node starts and ends as token indices of LibCST's code
generation and works out lines and columns only when asked: it must place every node where
MetadataWrapper.resolve(PositionProvider) does, node for node, on real files and odd text."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from bcast_lint.analysis.positions import StatementPositions, positions

FIXTURES = sorted(Path(__file__).resolve().parent.parent.joinpath("fixtures").glob("BCL0*/*.py"))

ODD_TEXTS = {
    "crlf": "import torch\r\n\r\ndef f(x):\r\n    if x:\r\n        return torch.zeros(1)\r\n",
    "lone cr": "x = 1\rdef f():\r    return (1 +\r            2)\r",
    "no final newline": "def f():\n    return g(1)",
    "continuations": "x = 1 + \\\n    2\ny = f(a,\n      b)[0]  # c\n",
    "decorators and comments": "# head\n\n@a.b(1)\n# between\n@c\nasync def f(x, /, *, y=2) -> int:\n"
                               "    '''doc'''\n    async with g() as h, i:\n        yield h\n# tail\n",
    "strings": "s = f'{x!r:>{w}}' 'b' \"\"\"c\n\"\"\"\nt = rb'\\x00'\n",
    "match": "match p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n",
    "tabs": "if x:\n\tif y:\n\t\tz = (1,\n\t\t     2)\n",
    "empty": "",
    "comment only": "# nothing\n",
}


def _assert_same_places(module: cst.Module) -> None:
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = positions(module)
    assert len(found) == len(expected) >= 1
    assert [node for node, place in expected.items() if found[node] != place] == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_positions_match_position_provider_on_fixtures(path):
    _assert_same_places(cst.parse_module(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", ODD_TEXTS)
def test_positions_match_position_provider_on_odd_text(name):
    _assert_same_places(cst.parse_module(ODD_TEXTS[name]))


def test_statement_positions_match_the_whole_module():
    """Each node placed from its top-level statement alone, shifted by the lines before it."""
    module = cst.parse_module("# head\n\nimport torch\n\n\n@d\ndef f(x):\n    return torch.zeros(\n        1)\n"
                              "class C:\n    def g(self):\n        pass\n# tail\n")
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    places = StatementPositions(module)
    assert {node: places.of(node) for node in expected} == dict(expected)


def test_positions_of_one_statement_taken_alone():
    module = cst.parse_module("import torch\n\n\ndef f(x):\n    return torch.zeros(1)\n")
    alone = module.with_changes(header=(), body=(module.body[1],), footer=())
    call = module.body[1].body.body[0].body[0].value
    assert positions(alone)[call].start.line == 4  # after the two blank lines that lead the def, and the def

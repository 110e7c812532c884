"""analysis.module.positions calls PositionProvider past MetadataWrapper.resolve (which visits
every node once more for nothing): it must give what resolve gives, node for node."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from bcast_lint.analysis.module import positions

FIXTURES = sorted(Path(__file__).resolve().parent.parent.joinpath("fixtures").glob("BCL00*/*.py"))[:40]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_positions_match_metadata_wrapper(path):
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    found = positions(module)
    assert len(found) == len(expected) > 1
    assert all(found[node] == place for node, place in expected.items())


def test_positions_of_one_statement_taken_alone():
    module = cst.parse_module("import torch\n\n\ndef f(x):\n    return torch.zeros(1)\n")
    alone = module.with_changes(header=(), body=(module.body[1],), footer=())
    call = module.body[1].body.body[0].body[0].value
    assert positions(alone)[call].start.line == 4  # after the two blank lines that lead the def, and the def

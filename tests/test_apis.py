"""The API catalog against the installed torch: what the linter states about signatures without
importing torch must match torch's own."""

import inspect

import pytest

from bcast_lint.analysis.apis import TORCH_GROUP_POSITIONS

dist = pytest.importorskip("torch.distributed")


@pytest.mark.parametrize("name", sorted(TORCH_GROUP_POSITIONS))
def test_group_positions_match_torch(name):
    parameters = list(inspect.signature(getattr(dist, name)).parameters)
    assert parameters.index("group") == TORCH_GROUP_POSITIONS[name]

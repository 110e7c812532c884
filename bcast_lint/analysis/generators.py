"""Random generators a function seeds from its parameters.

`def rollout(env_seed): g = torch.Generator().manual_seed(env_seed)` draws what its seed says:
called as `rollout(1000 + rank)`, it hands each rank values of its own, data as a batch read
from the rank's own shard is (divergence.RANDOM), not a number computed from the rank. Read
with CPython's `ast` from the module's whole text, once per module.
"""

from __future__ import annotations

import ast

from bcast_lint.analysis.syntax import called_name, top_functions

# Calls whose (first) argument seeds a generator: torch's, Python's and NumPy's.
_SEEDING = frozenset({"manual_seed", "Random", "default_rng", "RandomState", "seed", "Generator"})


def seeded_parameters(text: str) -> dict[str, tuple[int, ...]]:
    """The module's top-level functions -> the positions of the parameters that seed a generator
    in them (`torch.Generator().manual_seed(env_seed)`, `random.Random(seed)`, `np.random.
    default_rng(seed + 1)`)."""
    found = {}
    for node in top_functions(text, ("seed", "Random")):
        parameters = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        seeded = {name.id for call in ast.walk(node) if isinstance(call, ast.Call) and called_name(call) in _SEEDING
                  and call.args for name in ast.walk(call.args[0]) if isinstance(name, ast.Name)}
        positions = tuple(index for index, parameter in enumerate(parameters) if parameter in seeded)
        if positions:
            found[node.name] = positions
    return found


"""Random generators a function seeds from its parameters.

`def rollout(env_seed): g = torch.Generator().manual_seed(env_seed)` draws what its seed says:
called as `rollout(1000 + rank)`, it hands each rank values of its own, data as a batch read
from the rank's own shard is (divergence.RANDOM), not a number computed from the rank. A class
whose `__init__` seeds its generator so (`PoleEnv(seed=2000 + rank)`, `self.rng =
random.Random(seed)`) makes an object whose draws are each rank's own. Read with CPython's
`ast` from the module's whole text, once per module.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from bcast_lint.analysis.syntax import called_name, top_definitions

# Calls whose (first) argument seeds a generator: torch's, Python's and NumPy's.
_SEEDING = frozenset({"manual_seed", "Random", "default_rng", "RandomState", "seed", "Generator"})


class Seeding(NamedTuple):
    """The (name, position) of a function's or class's parameters that seed a generator."""
    parameters: tuple[tuple[str, int], ...]
    is_class: bool


def seeded_parameters(text: str) -> dict[str, Seeding]:
    """The module's top-level functions and classes -> the parameters that seed a generator in
    them, or in a class's `__init__` (`torch.Generator().manual_seed(env_seed)`,
    `random.Random(seed)`, `np.random.default_rng(seed + 1)`)."""
    found = {}
    for node in top_definitions(text, ("seed", "Random")):
        function = _constructor(node) if isinstance(node, ast.ClassDef) else node
        if function is None:
            continue
        parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if function is not node:
            parameters = parameters[1:]  # `self`, which a call to the class does not hand
        seeded = {name.id for call in ast.walk(function) if isinstance(call, ast.Call)
                  and called_name(call) in _SEEDING and call.args
                  for name in ast.walk(call.args[0]) if isinstance(name, ast.Name)}
        pairs = tuple((parameter, index) for index, parameter in enumerate(parameters) if parameter in seeded)
        if pairs:
            found[node.name] = Seeding(pairs, function is not node)
    return found


def _constructor(node: ast.ClassDef):
    """The class's own `__init__`, or None."""
    return next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)


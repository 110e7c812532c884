"""The distributed APIs bcast-lint knows, by fully qualified name.

A call is matched by the qualified name its imports give it (analysis.names), so aliases
(`import torch.distributed as dist`, `from accelerate.utils import broadcast as bc`) are the same
API and a local function that happens to be called `broadcast` is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TENSOR = "tensor"  # broadcasts a tensor (or, for accelerate, a nested structure of tensors)
OBJECTS = "objects"  # broadcasts a list of picklable objects, filled in place
OTHER = "other"  # any other collective: only where it runs matters


@dataclass(frozen=True)
class Api:
    qualified_name: str
    payload: str  # TENSOR, OBJECTS or OTHER
    src_keyword: str | None = None  # the parameter naming the source rank
    src_position: int | None = None
    default_src: int | None = None
    returns_none: bool = False  # torch.distributed returns None (a Work handle with async_op=True)
    in_place: bool = True  # the argument itself receives the value
    nested: bool = False  # walks lists, tuples and dicts and broadcasts each tensor leaf

    @property
    def short_name(self) -> str:
        return self.qualified_name.rsplit(".", 1)[-1]

    @property
    def is_broadcast(self) -> bool:
        return self.payload in (TENSOR, OBJECTS)


def _torch_style(module: str, name: str, payload: str) -> Api:
    return Api(f"{module}.{name}", payload, "src", 1, None, returns_none=True)


def _accelerate_style(module: str, name: str, payload: str) -> Api:
    return Api(f"{module}.{name}", payload, "from_process", 1, 0, nested=payload == TENSOR)


TORCH_MODULES = ("torch.distributed", "torch.distributed.distributed_c10d", "deepspeed.comm")
_ACCELERATE_MODULES = ("accelerate.utils", "accelerate.utils.operations")
_OTHER_TORCH_COLLECTIVES = (
    "all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_to_all",
    "gather", "gather_object", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "barrier", "monitored_barrier",
)
_OTHER_ACCELERATE_COLLECTIVES = ("gather", "gather_object", "reduce", "pad_across_processes")


def _build_catalog() -> dict[str, Api]:
    apis = []
    for module in TORCH_MODULES:
        apis.append(_torch_style(module, "broadcast", TENSOR))
        apis.append(_torch_style(module, "broadcast_object_list", OBJECTS))
        apis.extend(Api(f"{module}.{name}", OTHER) for name in _OTHER_TORCH_COLLECTIVES)
    for module in _ACCELERATE_MODULES:
        apis.append(_accelerate_style(module, "broadcast", TENSOR))
        apis.append(_accelerate_style(module, "broadcast_object_list", OBJECTS))
        apis.extend(Api(f"{module}.{name}", OTHER) for name in _OTHER_ACCELERATE_COLLECTIVES)
    # These return a new tensor and leave their input alone: `y = broadcast(x, 0)` is required.
    for module in ("torch.distributed.nn.functional", "torch.distributed.nn"):
        apis.append(Api(f"{module}.broadcast", TENSOR, "src", 1, None, in_place=False))
    apis.append(
        Api("torch.distributed._functional_collectives.broadcast", TENSOR, "src", 1, None, in_place=False)
    )
    return {api.qualified_name: api for api in apis}


CATALOG = _build_catalog()
API_PACKAGES = frozenset(name.split(".", 1)[0] for name in CATALOG)

# Accelerator/PartialState methods are collectives too; their receiver's type cannot be resolved
# statically, so the method name decides. `gather`/`reduce` are also Tensor methods, hence they
# count only on a receiver that names an accelerator (see analysis.module).
ACCELERATOR_METHODS = {
    name: Api(f"Accelerator.{name}", OTHER)
    for name in ("gather", "gather_for_metrics", "reduce", "pad_across_processes", "wait_for_everyone")
}
UNAMBIGUOUS_ACCELERATOR_METHODS = frozenset({"gather_for_metrics", "wait_for_everyone"})

# Text that must occur in a file for any rule to fire: the pre-filter's vocabulary.
CALL_WORDS = frozenset(
    {api.short_name for api in CATALOG.values()} | set(ACCELERATOR_METHODS)
)

# Methods taken to run before a class's other methods: what they assign to `self` is there when a
# later method broadcasts it (analysis.module follows such attributes; reduce.py keeps them).
SETUP_METHOD = re.compile(r"__init__$|_*(setup|init|initialize|build|prepare|load|configure)(_|$)|on_\w*start$")

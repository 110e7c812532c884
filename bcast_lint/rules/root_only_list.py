from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.expressions import argument as call_argument, is_none, last_name
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.ranks import integer_literal
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import UNSAFE, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid


@dataclass(frozen=True)
class _Contract:
    """A collective whose list argument belongs on one rank only."""

    list_keyword: str
    root_keyword: str  # names the rank that owns the list
    role: str  # "source" / "destination", as torch's error message says
    reported_as: str  # the argument's name in torch's error message


_CONTRACTS = {
    "gather": _Contract("gather_list", "dst", "destination", "gather_list"),
    "gather_object": _Contract("object_gather_list", "dst", "destination", "gather_list"),
    "scatter": _Contract("scatter_list", "src", "source", "scatter_list"),
}
_LIST_POSITION, _ROOT_POSITION = 1, 2
# Calls returning a non-empty sequence of tensors of a non-empty tensor.
_SPLITTING = {"chunk", "split", "tensor_split", "unbind"}


class RootOnlyListOnEveryRank(Rule):
    """
    ## What it does
    Flags `torch.distributed.scatter(..., scatter_list=...)`, `gather(..., gather_list=...)` and
    `gather_object(..., object_gather_list=...)` called with a non-empty list on ranks other than
    the source (`src`) or destination (`dst`): a list literal, a comprehension over
    `range(...)` or over `chunk`/`split`, `[t] * n`, or a local name holding one of those on
    those ranks, or an attribute (`self._buffer`) its class sets to one once, unconditionally, in a
    method's own body (`__init__`). A list chosen by rank (`buckets if rank == 0 else None`) or left empty is fine,
    and so is a call in a function that also makes the same call without the list: such code
    tells the root from the other ranks, by a test the analysis may not be able to read
    (`if not is_main_process():`, a rank within a process group, `rank == src_rank`).

    ## Why is this bad?
    Only the source of a scatter has tensors to send and only the destination of a gather has
    room to receive; torch checks the list on every rank. Measured with gloo on 2 processes,
    `dist.scatter(t, scatter_list=lst, src=0)` called alike on every rank raises on rank 1
    `ValueError: Argument scatter_list must NOT be specified on non-source ranks.` (the same for
    `gather_list` off `dst`), and rank 0 then fails with `Connection closed by peer`. It is the broadcast idiom
    ("every rank passes a buffer of the right shape") applied where it does not hold.

    ## Example
    ```python
    shards = [torch.zeros(n) for _ in range(world_size)]
    if rank == 0:
        shards = list(batch.chunk(world_size))
    dist.scatter(shard, scatter_list=shards, src=0)
    ```

    ## Use instead
    ```python
    shards = list(batch.chunk(world_size)) if rank == 0 else None
    dist.scatter(shard, scatter_list=shards, src=0)
    ```

    ## Fix safety
    Unsafe: the fix passes the list only on the root rank (`scatter_list=shards if
    dist.get_rank() == 0 else None`), which changes what the other ranks pass. It is offered for
    calls written through the `torch.distributed` (or `deepspeed.comm`) module, when the root is a
    literal rank or a simple name and not a group rank (`group_src=`, `group_dst=`).

    ## References
    - [torch.distributed.scatter](https://pytorch.org/docs/stable/distributed.html#torch.distributed.scatter)
    - [torch.distributed.gather](https://pytorch.org/docs/stable/distributed.html#torch.distributed.gather)
    """

    code = "BCL014"
    VALID = (
        Valid("shards = list(batch.chunk(2)) if rank == 0 else None\ndist.scatter(shard, scatter_list=shards, src=0)"),
        Valid("buckets = None\nif rank == 0:\n    buckets = [torch.zeros(4) for _ in range(2)]\n"
              "dist.gather(t, gather_list=buckets, dst=0)"),
        Valid("if rank == 0:\n    dist.gather(t, [torch.zeros(4) for _ in range(2)], dst=0)\nelse:\n    dist.gather(t, dst=0)"),
        Valid("dist.gather(t, gather_list=[], dst=0)"),
        Valid("def f(t, buckets):\n    dist.gather(t, gather_list=buckets, dst=0)"),
        Valid("dist.gather(t, [torch.zeros(4) for _ in range(2)] if rank == 0 else None, 0)"),
        Valid("dist.scatter_object_list(out, [cfg, cfg], src=0)"),
        Valid("buckets = [torch.zeros(4) for _ in range(2)]\nif rank == 1:\n    dist.gather(t, buckets, dst=1)"),
        Valid("dist.gather(t, gather_list=[x for x in pieces], dst=0)"),
        Valid("gathered = gather(t)"),
        Valid("def f(t, root):\n    if is_root():\n        buckets = [torch.zeros_like(t) for _ in range(2)]\n"
              "        dist.gather(t, buckets, dst=root)\n    else:\n        dist.gather(t, dst=root)"),
        # An attribute the class sets on the destination only, or in two places.
        Valid("class E:\n    def __init__(self):\n        if rank == 0:\n            self.out = [None] * 2\n"
              "    def f(self, x):\n        dist.gather_object(x, self.out, dst=0)"),
    )
    INVALID = (
        Invalid("class E:\n    def __init__(self):\n        self.out = [None for _ in range(2)]\n"
                "    def f(self, x):\n        dist.gather_object(x, self.out, dst=0)",
                expected_message="dist.gather_object() is given object_gather_list=self.out on ranks other than "
                "the destination rank (dst=0): torch raises \"ValueError: Argument gather_list must NOT be "
                "specified on non-destination ranks.\" there", range=(5, 31, 5, 39),
                expected_replacement="class E:\n    def __init__(self):\n        self.out = [None for _ in range(2)]\n"
                "    def f(self, x):\n        dist.gather_object(x, self.out if dist.get_rank() == 0 else None, dst=0)"),
        Invalid("shards = [torch.zeros(4) for _ in range(2)]\nif rank == 0:\n    shards = list(batch.chunk(2))\n"
                "dist.scatter(shard, scatter_list=shards, src=0)",
                expected_message='dist.scatter() is given scatter_list=shards on ranks other than the source '
                'rank (src=0): torch raises "ValueError: Argument scatter_list must NOT be '
                'specified on non-source ranks." there', range=(4, 34, 4, 40),
                expected_replacement="shards = [torch.zeros(4) for _ in range(2)]\nif rank == 0:\n"
                "    shards = list(batch.chunk(2))\n"
                "dist.scatter(shard, scatter_list=shards if dist.get_rank() == 0 else None, src=0)"),
        Invalid("buckets = [torch.zeros_like(t) for _ in range(dist.get_world_size())]\ndist.gather(t, buckets, dst=0)",
                expected_message='dist.gather() is given gather_list=buckets on ranks other than the '
                'destination rank (dst=0): torch raises "ValueError: Argument gather_list '
                'must NOT be specified on non-destination ranks." there', range=(2, 16, 2, 23),
                expected_replacement="buckets = [torch.zeros_like(t) for _ in range(dist.get_world_size())]\n"
                "dist.gather(t, buckets if dist.get_rank() == 0 else None, dst=0)"),
        Invalid("dist.gather(t, gather_list=[torch.zeros(4), torch.zeros(4)])",
                expected_message='dist.gather() is given gather_list=[torch.zeros(4), torch.zeros(4)] on ranks'
                ' other than the destination rank (dst=0): torch raises "ValueError: Argument'
                ' gather_list must NOT be specified on non-destination ranks." there', range=(1, 28, 1, 60),
                expected_replacement="dist.gather(t, gather_list=[torch.zeros(4), torch.zeros(4)] "
                "if dist.get_rank() == 0 else None)"),
        Invalid("results = [None] * 4\ndist.gather_object(score, results, dst=root)",
                expected_message='dist.gather_object() is given object_gather_list=results on ranks other than'
                ' the destination rank (dst=root): torch raises "ValueError: Argument '
                'gather_list must NOT be specified on non-destination ranks." there', range=(2, 27, 2, 34),
                expected_replacement="results = [None] * 4\n"
                "dist.gather_object(score, results if dist.get_rank() == root else None, dst=root)"),
        Invalid("buckets = [torch.zeros(4) for _ in range(2)]\ndist.gather(t, buckets, group_dst=0, group=g)",
                expected_message='dist.gather() is given gather_list=buckets on ranks other than the '
                'destination rank: torch raises "ValueError: Argument gather_list must NOT be'
                ' specified on non-destination ranks." there', range=(2, 16, 2, 23)),
        Invalid("from torch.distributed import scatter\nscatter(t, list(x.chunk(2)), 0)",
                expected_message='scatter() is given scatter_list=list(x.chunk(2)) on ranks other than the '
                'source rank (src=0): torch raises "ValueError: Argument scatter_list must '
                'NOT be specified on non-source ranks." there', range=(2, 12, 2, 28)),
        Invalid("buckets = [torch.zeros(4)] * 2 if rank == 0 else [torch.zeros(4)]\ndist.gather(t, buckets, dst=0)",
                expected_message='dist.gather() is given gather_list=buckets on ranks other than the '
                'destination rank (dst=0): torch raises "ValueError: Argument gather_list '
                'must NOT be specified on non-destination ranks." there', range=(2, 16, 2, 23),
                expected_replacement="buckets = [torch.zeros(4)] * 2 if rank == 0 else [torch.zeros(4)]\n"
                "dist.gather(t, buckets if dist.get_rank() == 0 else None, dst=0)"),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        for site in analysis.calls:
            contract = _contract(site)
            if contract is None or not site.reached:
                continue
            argument = _list_argument(site, contract)
            if argument is None or _has_listless_partner(analysis, site, contract):
                continue
            root = _root(site, contract)
            if _passed_off_root(analysis, site, argument.value, root):
                yield _report(analysis, site, contract, argument, root)


def _contract(site: CallSite) -> Optional[_Contract]:
    module, _, name = site.api.qualified_name.rpartition(".")
    return _CONTRACTS.get(name) if module in apis.TORCH_MODULES else None


def _list_argument(site: CallSite, contract: _Contract) -> Optional[cst.Arg]:
    argument = call_argument(site.call, _LIST_POSITION, contract.list_keyword)
    return None if argument is None or is_none(argument.value) else argument


def _has_listless_partner(analysis: ModuleAnalysis, site: CallSite, contract: _Contract) -> bool:
    """Whether the same function also makes the call without the list: the author tells the root
    from the other ranks, by a test the analysis may not read (`if not is_main_process():`, a
    group rank, `rank == src_rank`)."""
    return any(other is not site and other.api == site.api
               and _list_argument(other, contract) is None for other in analysis.calls_in(site.scope))


def _root(site: CallSite, contract: _Contract) -> Optional[cst.BaseExpression]:
    """The root rank's expression; `0` when defaulted; None for a rank within a group."""
    if call_argument(site.call, None, f"group_{contract.root_keyword}") is not None:
        return None
    argument = call_argument(site.call, _ROOT_POSITION, contract.root_keyword)
    return cst.Integer("0") if argument is None else argument.value


def _passed_off_root(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression,
                     root: Optional[cst.BaseExpression]) -> bool:
    """Whether some rank other than the root certainly passes a non-empty list. With a root
    that is not a literal, every rank reaching the call must pass one."""
    root_rank = integer_literal(root) if root is not None else None
    broken = []
    for world in site.reached:
        if world.rank == root_rank:
            continue
        values = analysis.values_in_world(site, expr, world)
        broken.append(bool(values) and all(_non_empty_list(analysis, value) for value in values))
    return any(broken) if root_rank is not None else bool(broken) and all(broken)


def _non_empty_list(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.List):
        return any(isinstance(element, cst.Element) for element in value.elements)
    if isinstance(value, cst.ListComp):
        return _non_empty_iteration(analysis, value.for_in)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        for items, count in ((value.left, value.right), (value.right, value.left)):
            if _non_empty_list(analysis, items) and integer_literal(count) != 0:
                return isinstance(count, (cst.Integer, cst.Name, cst.Attribute, cst.Call))
        return False
    if isinstance(value, cst.Call) and "builtins.list" in analysis.qualified_names(value):
        arguments = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
        return len(arguments) == 1 and _splits(arguments[0])
    return False


def _non_empty_iteration(analysis: ModuleAnalysis, for_in: cst.CompFor) -> bool:
    """`for _ in range(n)` (n >= 1 on the root, or it would fail there) or over a split tensor,
    with no `if` filter and no inner loop."""
    if for_in.ifs or for_in.inner_for_in is not None or not isinstance(for_in.iter, cst.Call):
        return False
    if "builtins.range" in analysis.qualified_names(for_in.iter):
        arguments = for_in.iter.args
        return len(arguments) == 1 and integer_literal(arguments[0].value) != 0
    return _splits(for_in.iter)


def _splits(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and last_name(expr.func) in _SPLITTING


def _report(analysis: ModuleAnalysis, site: CallSite, contract: _Contract, argument: cst.Arg,
            root: Optional[cst.BaseExpression]) -> Report:
    called = f"{analysis.code(site.call.func)}()"
    shown = " ".join(analysis.code(argument.value).split())
    if len(shown) > 40:
        shown = shown[:37] + "..."
    owner = f"the {contract.role} rank ({contract.root_keyword}={analysis.code(root)})" if root is not None \
        else f"the {contract.role} rank"
    message = (f"{called} is given {contract.list_keyword}={shown} on ranks other than {owner}: torch raises "
               f"\"ValueError: Argument {contract.reported_as} must NOT be specified on non-{contract.role} "
               "ranks.\" there")
    help_text = (f"Pass the list on the {contract.role} rank only and None elsewhere "
                 f"({contract.list_keyword}=... if rank == {contract.root_keyword} else None)")
    return Report(argument.value, message, _fix(analysis, site, argument, root), help_text)


def _fix(analysis: ModuleAnalysis, site: CallSite, argument: cst.Arg,
         root: Optional[cst.BaseExpression]) -> Optional[Fix]:
    """`lst` -> `lst if dist.get_rank() == <root> else None`, through the module the call uses."""
    func = site.call.func
    if root is None or not isinstance(root, (cst.Integer, cst.Name)) or not isinstance(func, cst.Attribute):
        return None
    module = func.value
    if not isinstance(module, (cst.Name, cst.Attribute)) or not (
            analysis.qualified_names(module) & set(apis.TORCH_MODULES)):
        return None
    value = analysis.code(argument.value)
    if isinstance(argument.value, (cst.IfExp, cst.Lambda)):
        value = f"({value})"
    condition = f"{analysis.code(module)}.get_rank() == {analysis.code(root)}"
    edit = replace_node(analysis, argument.value, f"{value} if {condition} else None")
    return Fix(UNSAFE, "Pass the list on the root rank only", (edit,))

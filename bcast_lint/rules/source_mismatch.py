from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.apis import TORCH_MODULES, TORCH_ROOTS
from bcast_lint.analysis.bindings import target_names
from bcast_lint.analysis.divergence import is_data_reason
from bcast_lint.analysis.expressions import allocation, argument_value, is_none, method_name
from bcast_lint.analysis.flow import ASSIGNED
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.ranks import LOCAL_RANK, RANK, World, integer_literal
from bcast_lint.analysis.walk import ScopeVisitor
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# Values that only reserve room for what the source sends: receiving into them is their purpose.
# Ones, or any other non-zero constant, written under a rank test are a value that rank computes
# (`t.fill_(0.75)`, `torch.full((3,), 0.75)`, `torch.ones(3)`): a fill, not a receiver.
_PLACEHOLDER_CONSTRUCTORS = {"torch.zeros", "torch.zeros_like", "torch.empty", "torch.empty_like"}
_PLACEHOLDER_METHODS = {"new_zeros", "new_empty", "zero_"}
_CONSTANT_CONSTRUCTORS = {"torch.tensor", "torch.Tensor", "torch.LongTensor", "torch.IntTensor",
                          "torch.FloatTensor", "torch.full", "torch.full_like"}
_NAME_DEPTH = 3  # `src = s; s = 0`: how many assignments a source name is followed through


class SourceMismatch(Rule):
    """
    ## What it does
    Flags a broadcast whose source rank is not the rank that computes the value: the value is
    filled under a rank condition that holds on exactly one rank other than the source
    (`if rank == 1:` with `src=0`, `if accelerator.is_last_process:` with accelerate's default
    `from_process=0`), or the source rank itself differs between ranks (`src=rank`,
    `src=dist.get_rank()`, `from_process=accelerator.process_index`), also where a helper's
    `src` parameter is handed this process's rank by the module's own call (`share(fn,
    int(os.environ["LOCAL_RANK"]))`, reported at that call). A helper's parameter named `rank`
    that it compares with the process's own (`dist.get_rank() == rank`) is a leader's rank, not
    this process's.

    The root of torch's gather, reduce and scatter (and their object forms: `dst=`, `src=`) must
    be the same on every rank too: `dist.reduce(t, dst=rank)` is flagged, and so is a root that
    differs through a value no rank test spells: one drawn from a generator the script never
    seeds, read from a file or the clock, or returned by a helper of the module that computes a
    number from the rank (`pick_collector()` ranking a table it filled at its own index, so that
    every rank picks itself). A helper named after a rank (`get_global_rank`, `src_rank_of(group)`)
    returns one rank of a group and is left alone, as are roots counted after a collective made
    the counts alike (`all_reduce(counts)`, then `counts.argmax()`).

    A source that is not a member of the broadcast's group is flagged too: `src` is a global
    rank, so `src=0` with `group=g` where `g = dist.new_group([2, 3])` names rank 0, not the
    group's first member (torch raises `ValueError: Global rank 0 is not part of group`;
    `group_src=0` names the group's own rank 0). Only groups made of literal ranks are checked.

    ## Why is this bad?
    A broadcast copies the source rank's tensor to every rank, whatever the others hold. When
    another rank filled the value, the source sends its placeholder, every rank (the filling one
    included) ends up with it, and training silently goes on with zeros. Under accelerate's
    Megatron-LM mode `is_main_process` is the last process while `broadcast` still sends from
    process 0, so code guarded by the "main" process there has this bug.

    A source that differs per rank (`src=rank`) makes every rank wait to send to the others: the
    job hangs until the backend timeout (30 minutes with gloo, the 10-minute NCCL watchdog), and
    `TORCH_DISTRIBUTED_DEBUG=DETAIL`, which catches shape, dtype and one-sided mismatches, does not
    catch this one. A gather, reduce or scatter whose root differs waits the same way: each rank
    that names itself as the root waits for the others' tensors, which go elsewhere.

    Only what is statically known is reported: a source rank written as a literal (or accelerate's
    default), a fill condition decided by the rank alone, and a per-rank source from an expression
    that is the rank. `src=args.src`, or a fill under `if is_writer:`, is never guessed at. A
    per-rank source is not reported under an `if` the rank does not decide (DeepSpeed's
    `if self.is_last_stage(): dist.broadcast(x, src=self.global_rank)`, where the receivers call
    the broadcast elsewhere with the sender's rank), nor from a parameter with a default
    (`def send(data, rank=0)`), nor from `get_global_rank(group, r)`, which is rank r's number.
    `is_local_main_process` holds on rank 0 too (and on the first rank of every other node), so a
    value filled under it with source 0 is not reported: rank 0 has filled it, and the other
    nodes' copies are overwritten with rank 0's, which is usually what such code wants. A rank
    that assigns a placeholder (`torch.zeros(...)`, `[None]`, a literal `torch.tensor([0])`) is
    receiving, not filling, and is not reported either. An in-place write under the rank test
    (`stats.copy_(measured)`, `stats[:k] = x`, `stats += x`) fills like an assignment; clearing a
    receiver (`stats.zero_()`, `stats.fill_(0)`) does not. A non-zero constant is a value the rank
    computes, so `t.fill_(0.75)`, `torch.full((3,), 0.75)` and `torch.ones(3)` under the test fill;
    only zeros and empty allocations receive.

    ## Example
    ```python
    seed = torch.zeros(1, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_last_process:
        seed = torch.randint(0, 2**31, (1,), device=accelerator.device)
    seed = broadcast(seed)  # from_process=0 sends rank 0's zero

    dist.broadcast(config_tensor, src=dist.get_rank())  # hangs
    ```

    ## Use instead
    ```python
    seed = torch.zeros(1, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_main_process:
        seed = torch.randint(0, 2**31, (1,), device=accelerator.device)
    seed = broadcast(seed)  # or broadcast(seed, from_process=accelerator.num_processes - 1)

    dist.broadcast(config_tensor, src=0)
    ```

    ## Fix safety
    No fix. Two edits would make the ranks agree, moving the fill to the source rank or passing
    the filling rank as the source, and which one is right depends on why that rank computes the
    value (it may be the only rank holding a file, a GPU or a network connection). A per-rank
    source has no right replacement the linter could know.

    ## References
    - [torch.distributed.broadcast](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast)
    - [accelerate.utils.broadcast](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast)
    """

    code = "BCL009"
    VALID = (
        # Roots every rank agrees on: counts summed over the ranks before the largest is picked, a
        # configured one, a helper named after a rank (one rank of a group), a loop over roots.
        Valid("def f(mine, world):\n    counts = torch.zeros(world)\n    counts[rank] = len(mine)\n"
              "    dist.all_reduce(counts)\n    dst = int(counts.argmax())\n    dist.gather(torch.ones(2), None, dst=dst)"),
        Valid("def f(t, args):\n    dist.reduce(t, args.dst)"),
        Valid("def src_rank_of(group):\n    return dist.get_rank() - dist.get_rank() % 2\n"
              "def f(t, group):\n    dist.scatter(t, None, src=src_rank_of(group), group=group)"),
        Valid("def f(t, world):\n    for root in range(world):\n        dist.gather(t, None, dst=root)"),
        Valid("x = torch.zeros(4)\nif rank == 0:\n    x = torch.randn(4)\ndist.broadcast(x, src=0)"),
        Valid("x = torch.zeros(4)\nif accelerator.is_main_process:\n    x = torch.randn(4)\nx = broadcast(x)"),
        Valid("x = torch.zeros(4)\nif accelerator.is_local_main_process:\n    x = torch.randn(4)\nx = broadcast(x)"),
        Valid("x = torch.zeros(4)\nif rank == 1:\n    x = torch.randn(4)\ndist.broadcast(x, src=1)"),
        Valid("x = torch.zeros(4)\nif accelerator.process_index == 2:\n    x = torch.randn(4)\n"
              "x = broadcast(x, from_process=2)"),
        Valid("x = torch.zeros(4)\nif accelerator.is_last_process:\n    x = torch.randn(4)\n"
              "x = broadcast(x, from_process=accelerator.num_processes - 1)"),
        Valid("def f(args, x):\n    dist.broadcast(x, src=args.src)"),
        Valid("def f(x, is_writer):\n    if is_writer:\n        x = torch.randn(4)\n    dist.broadcast(x, src=0)"),
        Valid("x = torch.randn(4)\nif rank != 0:\n    x = torch.zeros(4)\ndist.broadcast(x, 0)"),
        Valid("x = torch.randn(4)\nif rank == 1:\n    x = torch.zeros_like(x)\ndist.broadcast(x, 0)"),
        Valid("if rank == 0:\n    x = torch.randn(4)\nelse:\n    x = torch.zeros(4)\ndist.broadcast(x, 0)"),
        Valid("SRC = 0\nx = torch.zeros(4)\nif rank == SRC:\n    x = torch.randn(4)\ndist.broadcast(x, src=SRC)"),
        Valid("def f(tensors, world_size):\n    for rank in range(world_size):\n"
              "        dist.broadcast(tensors[rank], src=rank)"),
        Valid("works = [dist.broadcast(t, src=rank, async_op=True) for rank, t in enumerate(ts)]"),
        Valid("if rank == 0:\n    dist.broadcast(x, src=rank)"),
        Valid("def f(x, is_sender):\n    if is_sender:\n        dist.broadcast(x, src=rank)"),
        Valid("def send(x, rank=0):\n    dist.broadcast(x, src=rank)"),
        # A helper whose `rank` is the leader's, compared with the process's own: every caller
        # passes one global rank.
        Valid("def share(fn, rank):\n    out = [fn() if dist.get_rank() == rank else None]\n"
              "    dist.broadcast_object_list(out, src=rank)\n    return out[0]\n"
              "def f(fn, cfg):\n    return share(fn, cfg.leader_rank)"),
        Valid("stats = torch.zeros(4)\nif accelerator.is_main_process:\n    stats.copy_(measure())\n"
              "broadcast(stats)"),
        Valid("x = torch.randn(4)\nif rank == 1:\n    x.zero_()\ndist.broadcast(x, 0)"),
        Valid("x = torch.randn(4)\nif rank == 1:\n    x = torch.full((4,), 0.0)\ndist.broadcast(x, 0)"),
        Valid("n = 0\nn += 1\nx = torch.zeros(4)\nif rank == 1:\n    x = torch.randn(4)\ndist.broadcast(x, src=n)"),
        # A source among the group's members, or a group whose members are not written out.
        Valid("def f(x):\n    g = dist.new_group([2, 3])\n    dist.broadcast(x, src=2, group=g)"),
        Valid("def f(x, ranks):\n    g = dist.new_group(ranks)\n    dist.broadcast(x, src=0, group=g)"),
        Valid("def f(x):\n    g = dist.new_group(range(4))\n    dist.broadcast(x, 0, g)"),
        Valid("def f(x, group):\n    src = dist.get_global_rank(group, 0)\n"
              "    dist.broadcast(x, src=src, group=group)"),
    )
    INVALID = (
        Invalid("def share(fn, rank):\n    out = [fn() if dist.get_rank() == rank else None]\n"
                "    dist.broadcast_object_list(out, src=rank)\n    return out[0]\n"
                "def f(fn):\n    return share(fn, int(os.environ['LOCAL_RANK']))",
                expected_message="'int(os.environ['LOCAL_RANK'])' is this process's own rank, passed as 'rank', the "
                "src of dist.broadcast_object_list() (line 11): it names a different source on different ranks, so "
                "the broadcast never matches up and hangs until the backend timeout", range=(6, 22, 6, 51)),
        Invalid("class K:\n    def sync(self):\n        self.buf = torch.zeros(4)\n"
                "        if accelerator.is_last_process:\n            self.buf.copy_(measure())\n"
                "        broadcast(self.buf)",
                expected_message="'self.buf' is filled only on the rank where 'accelerator.is_last_process' is true, "
                "but broadcast() sends from rank 0 (the default from_process=0), so every rank "
                "receives rank 0's placeholder",
                range=(6, 9, 6, 28)),
        Invalid("x = torch.zeros(4)\nif rank == 1:\n    x = torch.randn(4)\ndist.broadcast(x, src=0)",
                expected_message="'x' is filled only on the rank where 'rank == 1' is true, but "
                "dist.broadcast() sends from rank 0 (src=0), so every rank receives rank 0's placeholder",
                range=(4, 1, 4, 25)),
        # A non-zero constant is a value the rank computes, not a cleared receiver.
        Invalid("t = torch.zeros(3)\nif rank == 1:\n    t.fill_(0.75)\ndist.broadcast(t, src=0)",
                expected_message="'t' is filled only on the rank where 'rank == 1' is true, but "
                "dist.broadcast() sends from rank 0 (src=0), so every rank receives rank 0's placeholder",
                range=(4, 1, 4, 25)),
        Invalid("t = torch.zeros(3)\nif rank == 1:\n    t = torch.ones(3)\ndist.broadcast(t, src=0)",
                expected_message="'t' is filled only on the rank where 'rank == 1' is true, but "
                "dist.broadcast() sends from rank 0 (src=0), so every rank receives rank 0's placeholder",
                range=(4, 1, 4, 25)),
        # An in-place write is a fill like an assignment.
        Invalid("stats = torch.zeros(4)\nif accelerator.is_last_process:\n    stats.copy_(measure())\n"
                "broadcast(stats)",
                expected_message="'stats' is filled only on the rank where 'accelerator.is_last_process' "
                "is true, but broadcast() sends from rank 0 (the default from_process=0), so every rank "
                "receives rank 0's placeholder", range=(4, 1, 4, 17)),
        Invalid("x = torch.zeros(4)\nif rank == 1:\n    x[:2] = torch.randn(2)\ndist.broadcast(x, src=0)",
                expected_message="'x' is filled only on the rank where 'rank == 1' is true, but "
                "dist.broadcast() sends from rank 0 (src=0), so every rank receives rank 0's placeholder",
                range=(4, 1, 4, 25)),
        Invalid("x = torch.zeros(4)\nif accelerator.process_index == 2:\n    x = torch.randn(4)\n"
                "x = broadcast(x, from_process=0)",
                expected_message="'x' is filled only on the rank where 'accelerator.process_index == 2' "
                "is true, but broadcast() sends from rank 0 (from_process=0), so every rank receives rank "
                "0's placeholder", range=(4, 5, 4, 33)),
        Invalid("x = torch.zeros(4)\nif accelerator.is_last_process:\n    x = torch.randn(4)\nx = broadcast(x)",
                expected_message="'x' is filled only on the rank where 'accelerator.is_last_process' is "
                "true, but broadcast() sends from rank 0 (the default from_process=0), so every rank "
                "receives rank 0's placeholder", range=(4, 5, 4, 17)),
        Invalid("x = torch.randn(4) if rank == 1 else torch.zeros(4)\ndist.broadcast(x, 0)",
                expected_message="'x' is filled only on the rank where 'rank == 1' is true, but "
                "dist.broadcast() sends from rank 0 (src=0), so every rank receives rank 0's placeholder",
                range=(2, 1, 2, 21)),
        Invalid("obj = [None]\nif rank == 1:\n    obj = [{'lr': 0.1}]\ndist.broadcast_object_list(obj, src=0)",
                expected_message="'obj' is filled only on the rank where 'rank == 1' is true, but "
                "dist.broadcast_object_list() sends from rank 0 (src=0), so every rank receives rank 0's "
                "placeholder", range=(4, 1, 4, 39)),
        Invalid("src = 0\nx = torch.zeros(4)\nif local_rank == 1:\n    x = torch.randn(4)\n"
                "dist.broadcast(x, src=src)",
                expected_message="'x' is filled only on the rank where 'local_rank == 1' is true, but "
                "dist.broadcast() sends from rank 0 (src=src), so every rank receives rank 0's "
                "placeholder", range=(5, 1, 5, 27)),
        Invalid("dist.broadcast(x, src=rank)",
                expected_message="src=rank names a different source on different ranks, so "
                "dist.broadcast() never matches up and hangs until the backend timeout "
                "(TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)", range=(1, 1, 1, 28)),
        Invalid("def f(x):\n    g = dist.new_group([2, 3])\n    dist.broadcast(x, src=0, group=g)",
                expected_message="src=0 is a global rank, and rank 0 is not a member of 'g' (ranks 2, 3): torch "
                "raises \"ValueError: Global rank 0 is not part of group\" on the group's members",
                range=(3, 5, 3, 38)),
        Invalid("def f(x):\n    g = dist.new_group(ranks=range(4, 8))\n    dist.broadcast(x, 0, g)",
                expected_message="src=0 is a global rank, and rank 0 is not a member of 'g' (ranks 4, 5, 6, 7): "
                "torch raises \"ValueError: Global rank 0 is not part of group\" on the group's members",
                range=(3, 5, 3, 28)),
        Invalid("dist.broadcast(x, src=dist.get_rank())",
                expected_message="src=dist.get_rank() names a different source on different ranks, so "
                "dist.broadcast() never matches up and hangs until the backend timeout "
                "(TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)", range=(1, 1, 1, 39)),
        Invalid("x = broadcast(x, from_process=accelerator.process_index)",
                expected_message="from_process=accelerator.process_index names a different source on "
                "different ranks, so broadcast() never matches up and hangs until the backend timeout "
                "(TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)", range=(1, 5, 1, 57)),
        Invalid("def worker(rank, x):\n    dist.broadcast(x, rank)",
                expected_message="src=rank names a different source on different ranks, so "
                "dist.broadcast() never matches up and hangs until the backend timeout "
                "(TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)", range=(2, 5, 2, 28)),
        Invalid("def main(x):\n    rank, size = dist.get_rank(), dist.get_world_size()\n"
                "    dist.broadcast(x, src=rank)",
                expected_message="src=rank names a different source on different ranks, so "
                "dist.broadcast() never matches up and hangs until the backend timeout "
                "(TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)", range=(3, 5, 3, 32)),
        Invalid("dist.broadcast(x, src=0 if accelerator.is_main_process else 1)",
                expected_message="src=0 if accelerator.is_main_process else 1 names a different source on "
                "different ranks, so dist.broadcast() never matches up and hangs until the backend "
                "timeout (TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)", range=(1, 1, 1, 63)),
        # A destination each rank picks from a table it filled at its own index: each picks itself
        # (vllm#2528's shape).
        Invalid("def pick_collector(count, world):\n    sizes = [0] * world\n    sizes[dist.get_rank()] = count\n"
                "    return max(range(world), key=lambda r: sizes[r])\n"
                "def f(mine, world):\n    dst = pick_collector(len(mine), world)\n"
                "    dist.gather(torch.ones(2), None, dst=dst)",
                expected_message="dst=dst can name a different destination on different ranks "
                "('pick_collector()' returns a number made from the rank), so dist.gather() never matches up and "
                "hangs until the backend timeout",
                range=(7, 5, 7, 46)),
        Invalid("def f(t):\n    dist.reduce(t, dst=rank)",
                expected_message="dst=rank names a different destination on different ranks, so dist.reduce() "
                "never matches up and hangs until the backend timeout",
                range=(2, 5, 2, 29)),
        # A collector drawn from the process's own generator, which the script never seeds.
        Invalid("import random\ndef f(obj, world):\n    dist.reduce(obj, dst=random.randrange(world))\n"
                "if __name__ == '__main__':\n    f(torch.ones(1), 2)",
                expected_message="dst=random.randrange(world) can name a different destination on different "
                "ranks (it is drawn from a random generator the script never seeds, which each process seeds on "
                "its own), so dist.reduce() never matches up and hangs until the backend timeout",
                range=(3, 5, 3, 50)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        for site in analysis.calls:
            if site.api.is_broadcast:
                yield from _broadcast_source(analysis, site)
            elif _is_rooted(site):
                yield from _root_apart(analysis, site)


def _broadcast_source(analysis: ModuleAnalysis, site: CallSite) -> Iterator[Report]:
    sources = {world: _source_rank(analysis, site, world) for world in site.reached}
    known = set(sources.values())
    if None in known or not known:
        yield from _handed_varying_source(analysis, site)
        yield from _root_apart(analysis, site, worlds_decide=False)
        return
    outsider = _source_outside_group(analysis, site, known)
    if outsider is not None:
        yield outsider
    elif len(known) > 1:
        if _reached_unconditionally(analysis, site):
            yield Report(site.call, _per_rank_message(analysis, site),
                         help=f"Pass the same rank on every rank, e.g. {site.api.src_keyword}=0")
    else:
        yield from _filled_elsewhere(analysis, site, known.pop())


# -- a source that is not a member of the group ----------------------------------------------
def _source_outside_group(analysis: ModuleAnalysis, site: CallSite, sources: set) -> Optional[Report]:
    """`src` is a global rank: with `group=` a group made of literal ranks (`new_group([2, 3])`),
    a source that is not among them (`src=0`, meant as the group's first member)."""
    members = _group_members(analysis, site)
    if members is None or len(sources) != 1:
        return None
    source = next(iter(sources))
    if source in members:
        return None
    listed = ", ".join(map(str, sorted(members)))
    message = (f"{site.api.src_keyword}={source} is a global rank, and rank {source} is not a member of "
               f"'{analysis.code(site.group)}' (ranks {listed}): torch raises \"ValueError: Global rank "
               f"{source} is not part of group\" on the group's members")
    return Report(site.call, message, help=f"Pass the member's global rank, or group_src={source} for "
                  f"the group's own rank {source}")


def _group_members(analysis: ModuleAnalysis, site: CallSite) -> Optional[frozenset]:
    """The global ranks of the call's group when every definition of it reaching the call is
    `new_group(<literal ranks>)`; None otherwise."""
    group = site.group
    if not isinstance(group, cst.Name):
        return None
    found = set()
    for env in site.reached.values():
        for definition in env.get(group.value, ()):
            if definition.kind != ASSIGNED or definition.writes:
                return None
            found.add(_literal_ranks(definition.value))
    return found.pop() if len(found) == 1 else None


def _literal_ranks(value: cst.BaseExpression) -> Optional[frozenset]:
    """The ranks of `new_group([2, 3])`, `new_group(ranks=(2, 3))` or `new_group(range(2, 4))`."""
    if not (isinstance(value, cst.Call) and _called_name(value) == "new_group"):
        return None
    ranks = argument_value(value, 0, "ranks")
    if isinstance(ranks, (cst.List, cst.Tuple)):
        literals = [integer_literal(element.value) for element in ranks.elements]
        return None if None in literals or not literals else frozenset(literals)
    if isinstance(ranks, cst.Call) and _called_name(ranks) == "range" and 1 <= len(ranks.args) <= 2:
        bounds = [integer_literal(arg.value) for arg in ranks.args]
        return None if None in bounds else frozenset(range(*bounds))
    return None


# -- a source that differs per rank ---------------------------------------------------------
def _source_rank(analysis: ModuleAnalysis, site: CallSite, world: World) -> Optional[int]:
    """The source rank in `world`, or None when it cannot be known."""
    if site.source is None:
        return site.api.default_src
    loop_names = _comprehension_targets(analysis.ancestors(site))
    return _integer_value(analysis, site, world, site.source, loop_names, _NAME_DEPTH)


class _LoopNames(ScopeVisitor):
    """Names bound by the `for` loops in one scope's own body."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.scope = scope
        self.names: set = set()

    def visit_For(self, node: cst.For) -> None:
        self.names.update(target_names(node.target))

    visit_Lambda = ScopeVisitor.enters  # nor a lambda


def _loop_names(scope: cst.CSTNode) -> set:
    collector = _LoopNames(scope)
    collector.walk(scope)
    return collector.names


def _integer_value(analysis: ModuleAnalysis, site: CallSite, world: World, expr: cst.BaseExpression,
                   loop_names: set, depth: int) -> Optional[int]:
    literal = integer_literal(expr)
    if literal is not None:
        return literal
    if isinstance(expr, cst.IfExp):
        decided = analysis.conditions.evaluate(expr.test, world)
        arms = [expr.body] if decided is True else [expr.orelse] if decided is False else [expr.body, expr.orelse]
        values = {_integer_value(analysis, site, world, arm, loop_names, depth) for arm in arms}
        return values.pop() if len(values) == 1 else None
    if isinstance(expr, cst.Name):
        if expr.value in loop_names:
            return None  # `for rank in range(world_size)`: a loop over sources, not the own rank
        definitions = site.reached[world].get(expr.value)
        if definitions is not None:
            return _name_value(analysis, site, world, expr, definitions, loop_names, depth)
    if isinstance(expr, cst.Call) and _called_name(expr) == "get_global_rank":
        return None  # get_global_rank(group, group_rank): the global number of a given rank
    quantity = analysis.conditions.quantity(expr)
    return world.value_of(quantity) if quantity else None


def _called_name(call: cst.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def _name_value(analysis: ModuleAnalysis, site: CallSite, world: World, name: cst.Name,
                definitions: frozenset, loop_names: set, depth: int) -> Optional[int]:
    """A local name's value: every definition reaching the call must give the same integer."""
    if name.value in _loop_names(site.scope):
        return None  # `for rank in range(world_size)`: the name loops over sources
    values = set()
    for definition in definitions:
        if definition.writes:
            return None  # `src += 1`: the assigned value is not what the name holds
        if definition.kind == ASSIGNED:
            if depth == 0:
                return None
            values.add(_integer_value(analysis, site, world, definition.value, loop_names, depth - 1))
        elif _has_default(site.scope, name.value):
            return None  # `def send(data, rank=0)`: a parameter with a default is a setting
        else:
            # A parameter, `rank, size = ...` (which the data flow does not bind): a rank when
            # its name says so, as in rank tests.
            quantity = analysis.conditions.quantity(name)
            values.add(world.value_of(quantity) if quantity else None)
    return values.pop() if len(values) == 1 else None


def _has_default(scope: cst.CSTNode, name: str) -> bool:
    if not isinstance(scope, cst.FunctionDef):
        return False
    params = scope.params
    return any(param.name.value == name and param.default is not None
               for param in (*params.posonly_params, *params.params, *params.kwonly_params))


def _reached_unconditionally(analysis: ModuleAnalysis, site: CallSite) -> bool:
    """No `if` around the call whose test the rank does not decide. Under `if is_last_stage():`
    the sender may pass its own rank while the receivers pass the sender's, in another call."""
    worlds = analysis.worlds[site.scope]
    return all(analysis.conditions.evaluate(test, world) is not None
               for test in _enclosing_tests(analysis.ancestors(site)) for world in worlds)


def _enclosing_tests(ancestors: tuple) -> list:
    """The tests of the `if`s and conditional expressions around the call; none inside a lambda,
    whose body runs where it is called, not where it stands."""
    if any(isinstance(node, cst.Lambda) for node in ancestors):
        return []
    return [node.test for node in ancestors if isinstance(node, (cst.If, cst.IfExp))]


def _comprehension_targets(ancestors: tuple) -> set:
    """Names bound by the comprehensions around the call."""
    bound: set = set()
    for node in ancestors:
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            comp_for = node.for_in
            while comp_for is not None:
                bound.update(target_names(comp_for.target))
                comp_for = comp_for.inner_for_in
    return bound


def _handed_varying_source(analysis: ModuleAnalysis, site: CallSite) -> Iterator[Report]:
    """A source no world decides, a helper's parameter, that the module's own calls pass this
    process's rank (`self.leader = int(os.environ["LOCAL_RANK"])`, then `helper(fn,
    self.leader)`): reported where it is passed."""
    if not isinstance(site.source, cst.Name) or not _reached_unconditionally(analysis, site):
        return
    for value in analysis.arguments_for(site.scope, site.source.value):
        if analysis.conditions.quantity(value) in (RANK, LOCAL_RANK):
            # The fix belongs where the rank is handed in: report there.
            yield Report(value, f"'{analysis.code(value)}' is this process's own rank, passed as "
                         f"'{site.source.value}', the {site.api.src_keyword} of {_called(analysis, site)} (line "
                         f"{analysis.position(site.call).start.line}): it names a different source on different "
                         "ranks, so the broadcast never matches up and hangs until the backend timeout",
                         help="Pass the same global rank on every rank, e.g. 0")


def _per_rank_message(analysis: ModuleAnalysis, site: CallSite, why: Optional[str] = None) -> str:
    argument = f"{site.api.src_keyword}={analysis.code(site.source)}"
    role = "destination" if site.api.src_keyword == "dst" else "source"
    names = f"can name a different {role} on different ranks ({why})" if why \
        else f"names a different {role} on different ranks"
    # (measured for broadcast only: DETAIL's checks compare shapes and dtypes, not roots)
    unseen = " (TORCH_DISTRIBUTED_DEBUG=DETAIL does not catch it)" if site.api.is_broadcast else ""
    return f"{argument} {names}, so {_called(analysis, site)} never matches up and hangs until the backend timeout{unseen}"


# -- the root of a gather, reduce or scatter, or a broadcast's source, from a value that differs --
def _is_rooted(site: CallSite) -> bool:
    """torch's gather, reduce and scatter (and their object forms), called directly."""
    return site.api.short_name in TORCH_ROOTS and site.api.qualified_name.startswith(TORCH_MODULES) \
        and not site.api.via


def _root_apart(analysis: ModuleAnalysis, site: CallSite, worlds_decide: bool = True) -> Iterator[Report]:
    """A root that differs between ranks: as the rank decides it in each world (`dst=rank`), or
    through a value the divergence analysis follows (`dst = pick_collector(len(mine), world)`, a
    helper that ranks a table filled at this rank's own index: each rank picks itself)."""
    root = site.source
    if root is None or not _reached_unconditionally(analysis, site):
        return
    if worlds_decide:
        roots = {_source_rank(analysis, site, world) for world in site.reached}
        if None not in roots and len(roots) > 1:
            yield Report(site.call, _per_rank_message(analysis, site), help=_SAME_ROOT.format(site.api.src_keyword))
            return
    why = analysis.divergence.value_at(site.call, root)
    if not is_data_reason(why):  # (arithmetic on the rank is the worlds' to decide: a group's own numbering)
        helper = _rank_made(analysis, site, root)
        why = f"'{analysis.code(helper.func)}()' returns a number made from the rank" if helper is not None else None
    if why is not None:
        yield Report(site.call, _per_rank_message(analysis, site, why), help=_SAME_ROOT.format(site.api.src_keyword))


def _rank_made(analysis: ModuleAnalysis, site: CallSite, root: cst.BaseExpression) -> Optional[cst.Call]:
    """The call of a project function computing a number from the rank (computed_from_rank) that
    the root is, or that a local name holding it was assigned from."""
    values = [root]
    if isinstance(root, cst.Name):
        definitions = next(iter(site.reached.values()), {}).get(root.value, ())
        values = [definition.value for definition in definitions if definition.kind == ASSIGNED]
    return next((value for value in values if isinstance(value, cst.Call) and analysis.computed_from_rank(value)), None)


_SAME_ROOT = "Pass the same global rank on every rank, e.g. {}=0, or agree on it first (broadcast it from rank 0)"


# -- a value filled on another rank than the source -----------------------------------------
def _filled_elsewhere(analysis: ModuleAnalysis, site: CallSite, source: int) -> Iterator[Report]:
    source_world = next((world for world in site.reached if world.rank == source), None)
    if source_world is None:
        return  # the source never reaches the call, or is beyond the modelled ranks
    for name in analysis.payload_names(site):
        fills = _fills(analysis, site, name.value)
        if any(source_world in worlds for _, worlds in fills.values()):
            continue  # the source computes its own value
        for where, worlds in fills.values():
            if len({world.rank for world in worlds}) == 1:
                remedy = f"Fill '{name.value}' on rank {source}, or broadcast from the rank that fills it"
                yield Report(site.call, _fill_message(analysis, site, name.value, where, source), help=remedy)
                break


def _fills(analysis: ModuleAnalysis, site: CallSite, name: str) -> dict:
    """(definition, value) -> (rank condition, worlds) for each non-placeholder value chosen by
    the rank (under a rank guard, or by `a if <rank test> else b`) that reaches the call."""
    fills: dict = {}
    for world, definitions in analysis.definitions(site, name).items():
        for definition in definitions:
            for write in definition.writes:  # `stats.copy_(measured)` under a rank test fills too
                if write.guard is not None and not _is_placeholder_write(analysis, write):
                    fills.setdefault((definition, write.node), (_guard_phrase(analysis, write.guard), set()))[1].add(world)
            if definition.kind != ASSIGNED:
                continue
            where = _guard_phrase(analysis, definition.guard)
            for value, chosen_where in _choices(analysis, definition.value, world, where):
                if chosen_where is not None and not _is_placeholder(analysis, value):
                    fills.setdefault((definition, value), (chosen_where, set()))[1].add(world)
    return fills


def _guard_phrase(analysis: ModuleAnalysis, guard) -> Optional[str]:
    if guard is None:
        return None
    return analysis.test_phrase(guard.test, guard.polarity)


def _is_placeholder_write(analysis: ModuleAnalysis, write) -> bool:
    """`buf.zero_()`, `buf.fill_(0)`: clearing a receiver, not computing a value."""
    call = write.node
    if not isinstance(call, cst.Call) or method_name(call) not in ("zero_", "fill_"):
        return False
    return all(_is_zero(arg.value) for arg in call.args)


def _choices(analysis: ModuleAnalysis, expr: cst.BaseExpression, world: World, where: Optional[str]):
    """The values `expr` may take in `world`, each with the rank condition that selected it."""
    if not isinstance(expr, cst.IfExp):
        yield expr, where
        return
    decided = analysis.conditions.evaluate(expr.test, world)
    if decided is not None:
        where = f"'{analysis.code(expr.test)}' is {'true' if decided else 'false'}"
    if decided is not False:
        yield from _choices(analysis, expr.body, world, where)
    if decided is not True:
        yield from _choices(analysis, expr.orelse, world, where)


def _is_placeholder(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    """None, `[None]`, `[None] * n`, zeros/empty/ones, or a tensor of literal constants."""
    if is_none(value):
        return True
    if isinstance(value, (cst.List, cst.Tuple)):
        return all(_is_placeholder(analysis, e.value) for e in value.elements)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return _is_placeholder(analysis, value.left) or _is_placeholder(analysis, value.right)
    call = allocation(value)
    if call is None:
        return False
    if method_name(call) in _PLACEHOLDER_METHODS:
        return True
    qualified = analysis.qualified_names(call)
    if qualified & _PLACEHOLDER_CONSTRUCTORS:
        return True
    if qualified & {"torch.full", "torch.full_like"}:
        fill = argument_value(call, 1, "fill_value")
        return fill is not None and _is_zero(fill)
    return bool(qualified & _CONSTANT_CONSTRUCTORS) and all(
        _is_zero(arg.value) for arg in call.args if arg.keyword is None)


def _is_zero(expr: cst.BaseExpression) -> bool:
    """0, 0.0, None, or a list of them: what a receiver is cleared with."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value) == 0.0
    if is_none(expr):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _is_zero(expr.expression)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(_is_zero(e.value) for e in expr.elements)
    return False


def _fill_message(analysis: ModuleAnalysis, site: CallSite, name: str, where: str, source: int) -> str:
    if site.source is None:
        origin = f"the default {site.api.src_keyword}={source}"
    else:
        origin = f"{site.api.src_keyword}={analysis.code(site.source)}"
    return (f"'{name}' is filled only on the rank where {where}, but {_called(analysis, site)} sends "
            f"from rank {source} ({origin}), so every rank receives rank {source}'s placeholder")


def _called(analysis: ModuleAnalysis, site: CallSite) -> str:
    return f"{analysis.code(site.call.func)}()"

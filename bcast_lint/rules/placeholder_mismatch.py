from __future__ import annotations

import dataclasses
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.divergence import CONTROL
from bcast_lint.analysis.expressions import allocation, argument_value, last_name, literal_items
from bcast_lint.analysis.flow import ASSIGNED
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.number_kinds import (FLOAT, INT, TENSOR_DTYPES, mixed_choice, number_kind,
                                              scalar_tensor_source)
from bcast_lint.analysis.tensor_specs import (TensorSpec, byte_size, dtype_size, dtypes_differ,
                                              shape_text, shapes_differ, shapes_equal, tensor_spec)
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import UNSAFE, Edit, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# Collectives that need one dtype on every rank, and the position of the tensor each is handed.
_SAME_DTYPE = {"all_reduce": 0, "reduce": 0, "broadcast": 0, "gather": 0, "all_gather": 1,
               "all_gather_into_tensor": 1, "gather_all_tensors": 0}
# Placeholders whose shape and dtype arguments the fix may rewrite: they only allocate.
_FIXABLE = {"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.zeros_like",
            "torch.ones_like", "torch.empty_like", "torch.full_like", "Tensor.new_zeros",
            "Tensor.new_ones", "Tensor.new_empty", "Tensor.new_full"}


# Each rank's accuracy on its own labelled rows, all-reduced as a tensor made from a Python number.
# Each rank's ids of its own flagged rows, gathered as a tensor made from the list.
_FLAGGED_IDS = ("def flagged(rows):\n"
                "    mine = rows[dist.get_rank()::dist.get_world_size()]\n"
                "    ids = [row.id for row in mine if row.flagged]\n"
                "    out = [None] * dist.get_world_size()\n"
                "    dist.all_gather(out, torch.tensor(ids))\n"
                "    return out\n")
_ACCURACY = ("def evaluate(model, loader):\n"
             "    correct = total = 0\n"
             "    for x, y in loader:\n"
             "        kept = y != -100\n"
             "        correct += int((model(x).argmax(1) == y)[kept].sum())\n"
             "        total += int(kept.sum())\n"
             "    acc = correct / total if total else 0\n"
             "    t = torch.tensor(acc)\n"
             "    dist.all_reduce(t)\n"
             "    return t.item() / world\n")

class PlaceholderMismatch(Rule):
    """
    ## What it does
    Flags a broadcast placeholder whose shape or dtype differs, as written, from the tensor the
    source rank sends: `torch.zeros(1)` on the receiving ranks against `torch.randint(0, 10, (8,))`
    on the source rank, `torch.zeros(n)` (float32) against `torch.randperm(n)` (int64), or two
    explicit `dtype=` that differ.

    Only shapes and dtypes that the code states are compared: literal sizes, sizes written alike
    on both sides (`n` and `n`), explicit dtypes and the constructors' defaults (float32 for
    `zeros`/`ones`/`empty`/`rand`/`randn`/`linspace`, int64 for `randint`/`randperm`, the fill
    value's or the data's type for `full`/`tensor`; a conversion such as `.long()` or
    `.to(torch.float16)` counts). Shape and dtype are carried through methods that keep them
    (`.clone()`, `.detach()`, `.contiguous()`, in-place methods such as `.uniform_()`) and through
    arithmetic with Python numbers, promoted as PyTorch does: `torch.rand(4) * 0.5 + 0.25` is
    float32 of shape (4,), `torch.randint(0, 10, (4,)) / 2` is float32, `torch.randint(0, 10, (4,))
    * 2` stays int64. A placeholder made by a project helper whose body is one `return` of an
    allocation (`receive_buffer(n)` returning `torch.zeros(n)`) is read with the call's arguments
    in its parameters' place (no fix is offered there: the helper is the author's). A size held in a parameter or read from `.shape` is never
    guessed, and nothing is reported when the source rank's value is unknown. Default dtypes
    assume `torch.set_default_dtype` was not called.

    It also flags a receiving rank's placeholder shaped by what differs between ranks
    (analysis/divergence.py): `torch.zeros_like(local_batch)` where the batch comes from a rank's
    own, uneven share, `torch.zeros(n)` with `n = len(items[rank::world])`. Each rank then
    allocates its own size, and the source's tensor fits only where the sizes happen to agree.
    And it flags accelerate's recursive `broadcast` of a dict or list whose keys or items differ
    between ranks (`{key: ... for key in my_keys}` with `my_keys` a rank's own share): each rank
    walks its own structure, so the ranks' inner broadcasts pair up the wrong tensors.
    And it flags a collective (`all_reduce`, `reduce`, `broadcast`, `gather`, `all_gather`, the
    frameworks' methods named so) handed a tensor made from a Python number without a `dtype`
    that is an int on some ranks and a float on the others: `torch.tensor(correct / total if
    total else 0)` where `total` comes from the rank's own data is int64 where it falls back to
    `0` and float32 elsewhere (also through a local, a dict of metrics, or a project helper that
    returns one). So does `torch.tensor(ids)` of a list of integers that can be empty on some ranks
    (`ids = [r.id for r in mine if r.bad]`): float32 where it is empty, int64 elsewhere
    (pytorch#110561).

    ## Why is this bad?
    `broadcast` copies the source rank's bytes into the receivers' tensors and checks neither
    shape nor dtype (accelerate checks shapes only with `ACCELERATE_DEBUG_MODE=1`, dtypes never).
    With gloo, a receiver smaller than the sent tensor aborts the process (SIGABRT,
    `Received data size doesn't match expected size`); a receiver of the same byte size but
    another dtype or shape, or a larger one, gets no error and silently holds reinterpreted or
    partial data. NCCL may hang or corrupt silently.

    ## Example
    ```python
    ids = torch.zeros(n, device=accelerator.device)
    if accelerator.is_main_process:
        ids = torch.randperm(n, device=accelerator.device)
    ids = broadcast(ids)
    ```

    ## Use instead
    ```python
    ids = torch.zeros(n, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_main_process:
        ids = torch.randperm(n, device=accelerator.device)
    ids = broadcast(ids)
    ```

    ## Fix safety
    Unsafe: the fix rewrites the placeholder's `dtype=` (adding it when absent) and its size
    arguments to the source rank's, which changes the receiving ranks' tensor. It is offered only
    for allocating constructors (`zeros`, `ones`, `empty`, `full`, their `_like` and `new_`
    forms) whose dtype is not set by a conversion such as `.long()`, and only when the source's
    size is literal.

    ## References
    - [torch.distributed.broadcast](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast)
    - [accelerate.utils.broadcast](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast)
    """

    code = "BCL007"
    VALID = (
        # The tensor's dtype is given; the fallback is a float; the choice is the same on every rank.
        Valid(_ACCURACY.replace("torch.tensor(acc)", "torch.tensor(acc, dtype=torch.float32)")),
        Valid(_ACCURACY.replace("if total else 0", "if total else 0.0")),
        Valid(_ACCURACY.replace("if total else 0", "if world > 1 else 0")),
        Valid("def receive_buffer(n, dtype=torch.int64):\n    return torch.zeros(n, dtype=dtype)\n"
              "def f(n):\n    if rank == 0:\n        order = torch.randperm(n)\n    else:\n"
              "        order = receive_buffer(n)\n    dist.broadcast(order, src=0)"),
        Valid("ids = torch.zeros(8, dtype=torch.int64)\nif accelerator.is_main_process:\n"
              "    ids = torch.randint(0, 10, (8,))\nbroadcast(ids)"),
        Valid("ids = torch.empty(n, dtype=torch.long)\nif rank == 0:\n    ids = torch.randperm(n)\n"
              "dist.broadcast(ids, src=0)"),
        Valid("def f(x, n):\n    buf = torch.zeros(x.shape, dtype=torch.int64)\n    if rank == 0:\n"
              "        buf = torch.randint(0, 10, (n,))\n    dist.broadcast(buf, src=0)"),
        Valid("def f(shape):\n    buf = torch.zeros(shape)\n    if rank == 0:\n        buf = torch.rand(8)\n"
              "    dist.broadcast(buf, src=0)"),
        Valid("def f(x):\n    buf = x\n    if rank == 0:\n        buf = torch.rand(8)\n    dist.broadcast(buf, src=0)"),
        # A dict whose keys every rank has alike.
        Valid("from accelerate.utils import broadcast\ndef f(keys):\n"
              "    stats = {key: torch.zeros(2) for key in keys}\n    return broadcast(stats)"),
        # Shaped like a tensor every rank holds alike (a parameter), not like a rank's own share.
        Valid("def f(batch):\n    buf = batch.clone() if rank == 0 else torch.zeros_like(batch)\n"
              "    dist.broadcast(buf, src=0)"),
        Valid("ids = torch.zeros(4)\nif rank == 1:\n    ids = torch.randperm(4)\ndist.broadcast(ids, src=src)"),
        Valid("ids = torch.zeros(n).long()\nif rank == 0:\n    ids = torch.randperm(n)\ndist.broadcast(ids, 0)"),
        Valid("noise = torch.zeros(4)\nif rank == 0:\n    noise = torch.rand(4) * 0.5 + 0.25\ndist.broadcast(noise, 0)"),
        Valid("x = torch.zeros(4)\nif rank == 0:\n    x = torch.randint(0, 10, (4,)) / 2\ndist.broadcast(x, 0)"),
        Valid("x = torch.zeros(4, dtype=torch.int64)\nif rank == 0:\n    x = 2 * torch.randint(0, 10, (4,)) - 1\n"
              "dist.broadcast(x, 0)"),
        Valid("x = torch.zeros(4)\nif rank == 0:\n    x = torch.rand(4).clone().detach()\ndist.broadcast(x, 0)"),
        Valid("x = torch.zeros(8)\nif rank == 0:\n    x = torch.rand(4) * y\ndist.broadcast(x, 0)"),
        Valid("x = torch.zeros(2, 2)\nif rank == 0:\n    x = torch.rand(4).view(2, 2)\ndist.broadcast(x, 0)"),
        # The ids' dtype is given; a list of floats is float32 empty or not; an unfiltered list.
        Valid(_FLAGGED_IDS.replace("torch.tensor(ids)", "torch.tensor(ids, dtype=torch.long)")),
        Valid(_FLAGGED_IDS.replace("row.id for", "row.score for")),
        Valid(_FLAGGED_IDS.replace(" if row.flagged", "")),
    )
    INVALID = (
        # Ids of a rank's own flagged rows: none flagged on one rank makes its tensor float32.
        Invalid(_FLAGGED_IDS, expected_message="all_gather() gets a tensor whose dtype can differ between ranks: "
                "'torch.tensor(ids)' is float32 where 'ids' is empty and int64 where it holds integers, and how "
                "many items it holds can differ between ranks (each rank keeps the items of its own share that "
                "pass a test, as many as its data lets through): the ranks' elements differ in size (8 against 4 "
                "bytes), so gloo aborts with a size mismatch and NCCL reads the bytes as the wrong type",
                range=(5, 5, 5, 44)),
        # An accuracy that falls back to the int 0 on a rank whose share was empty (speculators#1116).
        Invalid(_ACCURACY, expected_message="all_reduce() gets a tensor whose dtype can differ between ranks: "
                "'torch.tensor(acc)' (line 16) is int64 where it takes '0' and float32 where it takes 'correct / "
                "total', and which it takes can differ between ranks (it is computed from this rank's own batch of "
                "data): the ranks' elements differ in size (8 against 4 bytes), so gloo aborts with a size mismatch "
                "and NCCL reads the bytes as the wrong type", range=(9, 5, 9, 23)),
        # The same choice made in a helper that returns a dict of metrics.
        Invalid("def step_metrics(loss, n_rows, n_bad):\n"
                "    return {'loss': loss, 'error_rate': torch.tensor(n_bad / n_rows if n_bad else 0)}\n"
                "def train(loader):\n    for lines in loader:\n        n_bad = count_bad(lines)\n"
                "        metrics = step_metrics(step(lines), len(lines), n_bad)\n"
                "        accelerator.reduce(metrics, reduction='sum')",
                expected_message="reduce() gets a tensor whose dtype can differ between ranks: 'torch.tensor(n_bad / "
                "len(lines) if n_bad else 0)' (what 'step_metrics()' at line 14 returns) is int64 where it takes '0' "
                "and float32 where it takes 'n_bad / len(lines)', and which it takes can differ between ranks (it is "
                "computed from this rank's own batch of data): the ranks' elements differ in size (8 against 4 "
                "bytes), so gloo aborts with a size mismatch and NCCL reads the bytes as the wrong type",
                range=(7, 9, 7, 53)),
        # A receiver's size from what the object was constructed with: each process's own share.
        Invalid("class Balancer:\n    def __init__(self, share):\n        self.classes = sorted(set(share))\n"
                "    def weights(self):\n        if accelerator.is_main_process:\n"
                "            w = torch.ones(len(self.classes))\n        else:\n"
                "            w = torch.zeros(len(self.classes))\n        return broadcast(w)\n"
                "def main(labels):\n    with accelerator.split_between_processes(labels) as mine:\n"
                "        balancer = Balancer(mine)\n    return balancer.weights()",
                expected_message="'w' is allocated on the receiving ranks with a shape from 'len(self.classes)', "
                "which can differ between ranks (line 20 passes 'mine', and it holds this process's own share of the "
                "items): where it differs from what source rank 0 sends, broadcast() receives into a buffer of "
                "another size (gloo aborts with \"Received data size doesn't match expected size\", NCCL may hang "
                "or corrupt the data)", range=(8, 17, 8, 47)),
        Invalid("def receive_buffer(n, device='cpu'):\n    return torch.zeros(n, device=device)\n"
                "def f(n):\n    if rank == 0:\n        order = torch.randperm(n)\n    else:\n"
                "        order = receive_buffer(n)\n    dist.broadcast(order, src=0)",
                expected_message="placeholder 'order' is receive_buffer(n) (float32) on ranks where 'rank == 0' is "
                "false, but source rank 0 sends torch.randperm(n) (shape (n,), int64): the receiving ranks are "
                "smaller and abort (SIGABRT) under gloo", range=(7, 17, 7, 34)),
        Invalid("from accelerate.utils import broadcast\ndef f(keys):\n"
                "    mine = keys[accelerator.process_index::accelerator.num_processes]\n"
                "    stats = {key: torch.zeros(2) for key in mine}\n    return broadcast(stats)",
                expected_message="'stats' can hold different keys or items on different ranks (each rank takes "
                "every world-th item from its rank on, and the shares differ by one item unless they divide "
                "evenly): broadcast() walks each rank's own 'stats' and broadcasts its tensors one by one, so the "
                "ranks' broadcasts pair up tensors of different keys, or stop pairing up",
                range=(5, 12, 5, 28)),
        Invalid("def f(items):\n    mine = items[rank::dist.get_world_size()]\n"
                "    buf = torch.tensor(mine) if rank == 0 else torch.zeros_like(torch.tensor(mine))\n"
                "    dist.broadcast(buf, src=0)",
                expected_message="'buf' is allocated on the receiving ranks with a shape from "
                "'torch.tensor(mine)', which can differ between ranks (each rank takes every world-th item from "
                "its rank on, and the shares differ by one item unless they divide evenly): where it differs from "
                "what source rank 0 sends, broadcast() receives into a buffer of another size (gloo aborts with "
                "\"Received data size doesn't match expected size\", NCCL may hang or corrupt the data)",
                range=(3, 48, 3, 84)),
        Invalid("ids = torch.zeros(1)\nif accelerator.is_main_process:\n    ids = torch.randint(0, 10, (8,))\n"
                "ids = broadcast(ids)",
                expected_message="placeholder 'ids' is torch.zeros(1) (shape (1,), float32) on ranks "
                "where 'accelerator.is_main_process' is false, but source rank 0 sends torch.randint(0, "
                "10, (8,)) (shape (8,), int64): the receiving ranks are smaller and abort (SIGABRT) under "
                "gloo", range=(1, 7, 1, 21),
                expected_replacement="ids = torch.zeros(8, dtype=torch.int64)\n"
                "if accelerator.is_main_process:\n    ids = torch.randint(0, 10, (8,))\nids = broadcast(ids)"),
        Invalid("ids = torch.zeros(n, device=accelerator.device)\nif accelerator.is_main_process:\n"
                "    ids = torch.randperm(n, device=accelerator.device)\nids = broadcast(ids)",
                expected_message="placeholder 'ids' is torch.zeros(n, device=accelerator.device) "
                "(float32) on ranks where 'accelerator.is_main_process' is false, but source rank 0 sends "
                "torch.randperm(n, device=accelerator.device) (shape (n,), int64): the receiving ranks "
                "are smaller and abort (SIGABRT) under gloo", range=(1, 7, 1, 48),
                expected_replacement="ids = torch.zeros(n, device=accelerator.device, dtype=torch.int64)\n"
                "if accelerator.is_main_process:\n    ids = torch.randperm(n, device=accelerator.device)\n"
                "ids = broadcast(ids)"),
        Invalid("x = torch.ones((2, 3), dtype=torch.float16)\nif rank == 0:\n"
                "    x = torch.randn(2, 3, dtype=torch.float32)\ndist.broadcast(x, src=0)",
                expected_message="placeholder 'x' is torch.ones((2, 3), dtype=torch.float16) (shape (2, "
                "3), float16) on ranks where 'rank == 0' is false, but source rank 0 sends torch.randn(2, "
                "3, dtype=torch.float32) (shape (2, 3), float32): the receiving ranks are smaller and "
                "abort (SIGABRT) under gloo", range=(1, 5, 1, 44),
                expected_replacement="x = torch.ones((2, 3), dtype=torch.float32)\nif rank == 0:\n"
                "    x = torch.randn(2, 3, dtype=torch.float32)\ndist.broadcast(x, src=0)"),
        Invalid("x = torch.randn(4) if rank == 0 else torch.zeros(4, 2)\ndist.broadcast(x, 0)",
                expected_message="placeholder 'x' is torch.zeros(4, 2) (shape (4, 2), float32) on ranks "
                "where 'rank == 0' is false, but source rank 0 sends torch.randn(4) (shape (4,), "
                "float32): the receiving ranks are larger and silently end up holding wrong data",
                range=(1, 38, 1, 55),
                expected_replacement="x = torch.randn(4) if rank == 0 else torch.zeros(4)\ndist.broadcast(x, 0)"),
        Invalid("x = torch.zeros(3).long()\nif rank == 0:\n    x = torch.rand(3)\ndist.broadcast(x, 0)",
                expected_message="placeholder 'x' is torch.zeros(3).long() (shape (3,), int64) on ranks "
                "where 'rank == 0' is false, but source rank 0 sends torch.rand(3) (shape (3,), float32): "
                "the receiving ranks are larger and silently end up holding wrong data",
                range=(1, 5, 1, 19)),
        Invalid("noise = torch.zeros(4, dtype=torch.int64)\nif rank == 0:\n    noise = torch.rand(4) * 0.5 + 0.25\n"
                "dist.broadcast(noise, 0)",
                expected_message="placeholder 'noise' is torch.zeros(4, dtype=torch.int64) (shape (4,), "
                "int64) on ranks where 'rank == 0' is false, but source rank 0 sends torch.rand(4) * 0.5 "
                "+ 0.25 (shape (4,), float32): the receiving ranks are larger and silently end up holding "
                "wrong data", range=(1, 9, 1, 42),
                expected_replacement="noise = torch.zeros(4, dtype=torch.float32)\nif rank == 0:\n"
                "    noise = torch.rand(4) * 0.5 + 0.25\ndist.broadcast(noise, 0)"),
        Invalid("x = torch.zeros(4, dtype=torch.int64)\nif rank == 0:\n    x = torch.randint(0, 10, (4,)) / 2\n"
                "dist.broadcast(x, 0)",
                expected_message="placeholder 'x' is torch.zeros(4, dtype=torch.int64) (shape (4,), "
                "int64) on ranks where 'rank == 0' is false, but source rank 0 sends torch.randint(0, 10, "
                "(4,)) / 2 (shape (4,), float32): the receiving ranks are larger and silently end up "
                "holding wrong data", range=(1, 5, 1, 38),
                expected_replacement="x = torch.zeros(4, dtype=torch.float32)\nif rank == 0:\n"
                "    x = torch.randint(0, 10, (4,)) / 2\ndist.broadcast(x, 0)"),
        Invalid("x = torch.zeros(2)\nif rank == 0:\n    x = torch.rand(8).clone().detach()\ndist.broadcast(x, 0)",
                expected_message="placeholder 'x' is torch.zeros(2) (shape (2,), float32) on ranks where "
                "'rank == 0' is false, but source rank 0 sends torch.rand(8).clone().detach() (shape "
                "(8,), float32): the receiving ranks are smaller and abort (SIGABRT) under gloo",
                range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nif rank == 0:\n"
                "    x = torch.rand(8).clone().detach()\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(4, dtype=torch.float16).uniform_()\nif rank == 0:\n    x = torch.rand(4)\n"
                "dist.broadcast(x, 0)",
                expected_message="placeholder 'x' is torch.empty(4, dtype=torch.float16).uniform_() "
                "(shape (4,), float16) on ranks where 'rank == 0' is false, but source rank 0 sends "
                "torch.rand(4) (shape (4,), float32): the receiving ranks are smaller and abort (SIGABRT) "
                "under gloo", range=(1, 5, 1, 40),
                expected_replacement="x = torch.empty(4, dtype=torch.float32).uniform_()\nif rank == 0:\n"
                "    x = torch.rand(4)\ndist.broadcast(x, 0)"),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        yield from filter(None, (_mixed_dtypes(analysis, site) or _empty_list_dtypes(analysis, site)
                                 for site in analysis.calls))
        reported: set = set()
        for site in analysis.broadcasts():
            if site.api.payload != apis.TENSOR or site.source_rank is None:
                continue
            names = analysis.payload_names(site)
            shaped = {name.value: _shaped_by_local_data(analysis, site, name.value) for name in names}
            # A tensor allocated with a length that varies is not a dict of varying keys.
            keys = _keys_differ(analysis, site) if not any(shaped.values()) else None
            if keys is not None:
                yield keys
            for name in names:
                for placeholder, sources, where in self._mismatches(analysis, site, name.value):
                    if placeholder.call not in reported:
                        reported.add(placeholder.call)
                        yield self._report(analysis, site, name.value, placeholder, sources, where)
                for made, model, reason in shaped[name.value]:
                    if made not in reported:
                        reported.add(made)
                        yield Report(made, _local_shape_message(analysis, site, name.value, model, reason),
                                     help="Broadcast the source's shape first and allocate every receiver with it")

    def _mismatches(self, analysis: ModuleAnalysis, site: CallSite, name: str):
        """(placeholder spec, source specs, where-phrase) for each receiving-rank allocation of
        `name` that certainly differs from every value the source rank may send."""
        sources = self._source_specs(analysis, site, name)
        if not sources:
            return []
        found: dict = {}
        for world, definitions in analysis.definitions(site, name).items():
            if world.rank == site.source_rank:
                continue
            for definition in definitions:
                for spec in self._specs(analysis, definition, world) or ():
                    if all(_differ(spec, source) for source in sources):
                        found.setdefault(spec.call, (spec, set()))[1].add(definition)
        results = []
        for spec, broken in found.values():
            split = analysis.split_ranks(
                site, name, lambda d, world, broken=broken: world.rank != site.source_rank and d in broken)
            results.append((spec, sources, split.where if split else "other than the source"))
        return results

    def _source_specs(self, analysis: ModuleAnalysis, site: CallSite, name: str) -> list[TensorSpec]:
        """Every spec `name` may have on the source rank, or [] when any of them is unknown."""
        specs: dict = {}
        for world, definitions in analysis.definitions(site, name).items():
            if world.rank != site.source_rank:
                continue
            for definition in definitions:
                found = self._specs(analysis, definition, world)
                if found is None:
                    return []
                specs.update((spec.call, spec) for spec in found)
        return sorted(specs.values(), key=lambda spec: _start(analysis, spec.call))

    @staticmethod
    def _specs(analysis: ModuleAnalysis, definition, world) -> Optional[list[TensorSpec]]:
        if definition.kind != ASSIGNED:
            return None
        values = analysis.values(definition, world)
        specs = [tensor_spec(value, analysis.qualified_names) or _helper_spec(analysis, value) for value in values]
        return None if not specs or None in specs else specs

    def _report(self, analysis: ModuleAnalysis, site: CallSite, name: str, placeholder: TensorSpec,
                sources: list[TensorSpec], where: str) -> Report:
        source = sources[0]
        remedy = _remedy(placeholder, source)
        message = (f"placeholder '{name}' is {_describe(analysis, placeholder)} on ranks {where}, but "
                   f"source rank {site.source_rank} sends {_describe(analysis, source)}: "
                   f"{_consequence(placeholder, source)}")
        unanimous = len({(s.shape, s.dtype) for s in sources}) == 1
        allocated_here = tensor_spec(placeholder.call, analysis.qualified_names) is not None  # not in a helper
        fix = _fix(analysis, placeholder, source, remedy) if unanimous and allocated_here else None
        return Report(placeholder.call, message, fix, f"Allocate the placeholder with {remedy}")


def _mixed_dtypes(analysis: ModuleAnalysis, site: CallSite) -> Optional[Report]:
    """A collective's tensor made by `torch.tensor(a / b if b else 0)` where which arm is taken
    differs between ranks: int64 on some ranks, float32 on the others (analysis/number_kinds.py)."""
    position = _SAME_DTYPE.get(site.api.short_name)
    tensor = argument_value(site.call, position) if position is not None and isinstance(site.call, cst.Call) else None
    for made, at, choice in _scalar_tensors(analysis, site, tensor) if tensor is not None else ():
        reason = analysis.divergence.value_at(site.call, choice.test)
        if reason is None or reason == CONTROL:
            continue
        kinds = {number_kind(choice.body): choice.body, number_kind(choice.orelse): choice.orelse}
        int_arm, float_arm = analysis.code(kinds[INT]), analysis.code(kinds[FLOAT])
        where = f"(line {analysis.position(at).start.line})" if at is made else \
            f"(what '{analysis.code(at.func)}()' at line {analysis.position(at).start.line} returns)"
        message = (f"{site.api.short_name}() gets a tensor whose dtype can differ between ranks: "
                   f"'{analysis.code(made)}' {where} is {TENSOR_DTYPES[INT]} where it takes '{int_arm}' and "
                   f"{TENSOR_DTYPES[FLOAT]} where it takes '{float_arm}', and which it takes can differ between "
                   f"ranks ({reason}): the ranks' elements differ in size (8 against 4 bytes), so gloo aborts with "
                   f"a size mismatch and NCCL reads the bytes as the wrong type")
        return Report(site.call, message, help="Give the tensor one dtype on every rank: pass dtype=torch.float32")
    return None


def _empty_list_dtypes(analysis: ModuleAnalysis, site: CallSite) -> Optional[Report]:
    """A collective's tensor made by `torch.tensor(ids)` without `dtype=`, of a list of integers
    that can be empty on some ranks (a filter of each rank's own records): torch makes an empty
    list float32 and a list of integers int64 (pytorch#110561)."""
    position = _SAME_DTYPE.get(site.api.short_name)
    tensor = argument_value(site.call, position) if position is not None and isinstance(site.call, cst.Call) else None
    made = _values_at(analysis, site, tensor.value) if isinstance(tensor, cst.Name) else [tensor]
    for value in filter(None, made):
        listed = scalar_tensor_source(value)
        if not isinstance(listed, cst.Name):
            continue
        reason = analysis.divergence.length_at(site.call, listed)
        if reason is None or reason == CONTROL or not any(_lists_integers(item) for item in
                                                          _values_at(analysis, site, listed.value)):
            continue
        return Report(site.call, f"{site.api.short_name}() gets a tensor whose dtype can differ between ranks: "
                      f"'{analysis.code(value)}' is {TENSOR_DTYPES[FLOAT]} where '{listed.value}' is empty and "
                      f"{TENSOR_DTYPES[INT]} where it holds integers, and how many items it holds can differ between "
                      f"ranks ({reason}): the ranks' elements differ in size (8 against 4 bytes), so gloo aborts with "
                      f"a size mismatch and NCCL reads the bytes as the wrong type",
                      help="Give the tensor one dtype on every rank: pass dtype=torch.long")
    return None


# Names of items that hold integers: ids, indices, counts, labels.
_INTEGER_NAMES = ("id", "ids", "idx", "index", "indices", "count", "label", "token")


def _lists_integers(made: cst.BaseExpression) -> bool:
    """A filter that keeps integers: `[rid for rid, a, b in rows if a != b]`, `[int(x) for x in ... if ...]`."""
    if not isinstance(made, cst.ListComp) or not made.for_in.ifs:
        return False  # (a share dealt by rank is empty only where the ranks outnumber the items)
    item = made.elt
    if isinstance(item, cst.Integer) or isinstance(item, cst.Call) and last_name(item.func) in ("int", "len"):
        return True
    named = (last_name(item) or "").lower() if isinstance(item, (cst.Name, cst.Attribute)) else ""
    return any(named == word or named.endswith("_" + word) or (len(word) <= 3 and named.endswith(word))
               for word in _INTEGER_NAMES)


def _scalar_tensors(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression, at=None, depth: int = 0):
    """(`torch.tensor(...)` call, the node of the module that shows where, its int-or-float
    choice) for each scalar tensor `expr` may be: itself, a local's values at the site, a dict
    literal's values, or what a project function returns, its arguments put in (`step_metrics(n_bad)`
    of `def step_metrics(n): return {"rate": torch.tensor(1 / n if n else 0)}`)."""
    if depth > 3:
        return
    if isinstance(expr, cst.Name):
        for value in _values_at(analysis, site, expr.value):
            yield from _scalar_tensors(analysis, site, value, at, depth + 1)
    elif isinstance(expr, cst.Dict):
        for value in literal_items(expr):
            yield from _scalar_tensors(analysis, site, value, at, depth + 1)
    elif scalar_tensor_source(expr) is not None:
        scalar = scalar_tensor_source(expr)
        for value in _values_at(analysis, site, scalar.value) if isinstance(scalar, cst.Name) else (scalar,):
            choice = mixed_choice(value)
            if choice is not None:
                yield expr, at or expr, choice
    elif isinstance(expr, cst.Call) and at is None:
        inlined = analysis.inlined_return(expr)
        if inlined is not None:
            yield from _scalar_tensors(analysis, site, inlined, expr, depth + 1)


def _values_at(analysis: ModuleAnalysis, site: CallSite, name: str) -> list[cst.BaseExpression]:
    """What the assignments of the local `name` that reach `site` assign, as written (a
    conditional expression whole)."""
    return list({definition.value: None for definitions in analysis.definitions(site, name).values()
                 for definition in definitions if definition.kind == ASSIGNED and definition.value is not None})


def _helper_spec(analysis: ModuleAnalysis, value: cst.BaseExpression) -> Optional[TensorSpec]:
    """The spec of what a project helper allocates and returns (`receive_buffer(n)`, whose body
    is `return torch.zeros(n)`), read at the call."""
    inlined = analysis.inlined_return(value) if isinstance(value, cst.Call) else None
    spec = tensor_spec(inlined, analysis.qualified_names) if inlined is not None else None
    return dataclasses.replace(spec, call=value, expression=value) if spec is not None else None


# Allocations shaped like a tensor (`zeros_like(x)`) or by sizes (`zeros(n, 4)`).
_SHAPED_LIKE = frozenset({"zeros_like", "empty_like", "ones_like", "full_like", "rand_like", "randn_like"})
_SIZED = frozenset({"zeros", "empty", "ones", "full"})


def _shaped_by_local_data(analysis: ModuleAnalysis, site: CallSite, name: str):
    """(allocation, what gives its shape, why that differs between ranks) for each receiving
    rank's allocation of `name` shaped by what differs between ranks (analysis/divergence.py):
    `torch.zeros_like(local_batch)` with a batch from a rank's own, uneven share."""
    found = {}
    for world, definitions in analysis.definitions(site, name).items():
        if world.rank == site.source_rank:
            continue
        for definition in definitions:
            for value in analysis.values(definition, world):
                call = allocation(value)
                method = last_name(call.func) if call is not None else None
                if method in _SHAPED_LIKE and call.args:
                    models = [call.args[0].value]
                elif method in _SIZED:
                    models = [arg.value for arg in call.args if arg.keyword is None]
                else:
                    continue
                for model in models:
                    reason = analysis.divergence.length_at(site.call, model) if method in _SHAPED_LIKE \
                        else analysis.divergence.why_at(site.call, model)
                    if reason is not None and reason != CONTROL:
                        found.setdefault(call, (call, model, reason))
    return list(found.values())


def _keys_differ(analysis: ModuleAnalysis, site: CallSite) -> Optional[Report]:
    """Accelerate's recursive broadcast of a dict (or list) whose keys (or items) differ between
    ranks: each rank walks its own structure, so the ranks' inner broadcasts stop pairing up."""
    if not site.api.nested or not isinstance(site.payload, cst.Name):
        return None
    reason = analysis.divergence.length_at(site.call, site.payload)
    if reason is None or reason == CONTROL:
        return None
    name = site.payload.value
    message = (f"'{name}' can hold different keys or items on different ranks ({reason}): "
               f"{site.api.short_name}() walks each rank's own '{name}' and broadcasts its tensors one by "
               f"one, so the ranks' broadcasts pair up tensors of different keys, or stop pairing up")
    return Report(site.call, message, help="Send the same keys from every rank: agree on them first "
                  "(broadcast_object_list of the source's keys), then build the dict from them")


def _local_shape_message(analysis: ModuleAnalysis, site: CallSite, name: str, model, reason: str) -> str:
    return (f"'{name}' is allocated on the receiving ranks with a shape from '{analysis.code(model)}', which can "
            f"differ between ranks ({reason}): where it differs from what source rank {site.source_rank} sends, "
            f"{site.api.short_name}() receives into a buffer of another size (gloo aborts with \"Received data "
            f"size doesn't match expected size\", NCCL may hang or corrupt the data)")


def _start(analysis: ModuleAnalysis, node: cst.CSTNode) -> tuple[int, int]:
    start = analysis.position(node).start
    return (start.line, start.column)


def _differ(a: TensorSpec, b: TensorSpec) -> bool:
    return shapes_differ(a, b) or dtypes_differ(a, b)


def _describe(analysis: ModuleAnalysis, spec: TensorSpec) -> str:
    code = " ".join(analysis.code(spec.expression).split())
    if len(code) > 60:  # keep what decides shape and dtype: positional arguments and dtype=
        kept = [arg for arg in spec.call.args if arg.keyword is None or arg.keyword.value == "dtype"]
        arguments = ", ".join(analysis.code(arg.value) if arg.keyword is None else f"dtype={analysis.code(arg.value)}"
                              for arg in kept)
        code = " ".join(f"{analysis.code(spec.call.func)}({arguments})".split())
        code += "..." if spec.expression is not spec.call else ""
    known = [f"shape {spec.shape_text}"] if spec.shape is not None and not spec.rank_ambiguous else []
    known += [spec.dtype] if spec.dtype is not None else []
    return f"{code} ({', '.join(known)})" if known else code


def _consequence(placeholder: TensorSpec, source: TensorSpec) -> str:
    received, sent = byte_size(placeholder), byte_size(source)
    if (received is None or sent is None) and shapes_equal(placeholder, source):
        received, sent = dtype_size(placeholder.dtype), dtype_size(source.dtype)
    if received is None or sent is None:
        return "gloo reinterprets the bytes silently (same size) or aborts (smaller receiver)"
    if received < sent:
        return "the receiving ranks are smaller and abort (SIGABRT) under gloo"
    if received > sent:
        return "the receiving ranks are larger and silently end up holding wrong data"
    if dtypes_differ(placeholder, source):
        return "the byte sizes agree, so gloo silently reinterprets the bytes as the wrong dtype"
    return "the byte sizes agree, so the values silently land in the wrong shape"


def _remedy(placeholder: TensorSpec, source: TensorSpec) -> str:
    parts = []
    if shapes_differ(placeholder, source):
        parts.append(f"shape {source.shape_text}")
    if dtypes_differ(placeholder, source):
        parts.append(f"dtype=torch.{source.dtype}")
    return " and ".join(parts)


def _fix(analysis: ModuleAnalysis, placeholder: TensorSpec, source: TensorSpec, remedy: str) -> Optional[Fix]:
    if placeholder.constructor not in _FIXABLE:
        return None
    edits = []
    if dtypes_differ(placeholder, source):
        edit = _dtype_edit(analysis, placeholder, source.dtype)
        if edit is None:
            return None
        edits.append(edit)
    if shapes_differ(placeholder, source):
        edit = _shape_edit(analysis, placeholder, source)
        if edit is None:
            return None
        edits.append(edit)
    return Fix(UNSAFE, f"Allocate the placeholder with {remedy}", tuple(edits))


def _dtype_edit(analysis: ModuleAnalysis, placeholder: TensorSpec, dtype: str) -> Optional[Edit]:
    call, node = placeholder.call, placeholder.dtype_node
    if node is not None and node not in call.args:
        return None  # set by a conversion (`.long()`); rewriting `dtype=` would not help
    if isinstance(node, cst.Arg) and isinstance(node.value, cst.Attribute):
        return replace_node(analysis, node.value.attr, dtype)
    prefix = _torch_prefix(analysis, call)
    if prefix is None:
        return None
    if node is not None:
        return replace_node(analysis, node.value, f"{prefix}.{dtype}")
    if not call.args:
        return None
    end = analysis.position(call.args[-1].value).end
    return Edit(end.line, end.column + 1, end.line, end.column + 1, f", dtype={prefix}.{dtype}")


def _shape_edit(analysis: ModuleAnalysis, placeholder: TensorSpec, source: TensorSpec) -> Optional[Edit]:
    arguments = placeholder.size_arguments
    if not arguments or source.shape is None or not all(isinstance(d, int) for d in source.shape):
        return None
    if placeholder.size_varargs and source.shape:
        text = ", ".join(str(dim) for dim in source.shape)
    else:
        text = shape_text(source.shape)
    start, end = analysis.position(arguments[0]).start, analysis.position(arguments[-1]).end
    return Edit(start.line, start.column + 1, end.line, end.column + 1, text)


def _torch_prefix(analysis: ModuleAnalysis, call: cst.Call) -> Optional[str]:
    """`torch` (or the alias it is imported as) when `call` is written `torch.zeros(...)`."""
    func = call.func
    if (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and "torch" in analysis.qualified_names(func.value)):
        return func.value.value
    return None

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.divergence import CONTROL, counted
from bcast_lint.analysis.expressions import is_none
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.ranks import World
from bcast_lint.analysis.walk import children, is_bare_call
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import SAFE, UNSAFE, Edit, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# Values that are certainly not a list and cannot be assigned into by index, by their class.
_NOT_LISTS = {cst.Tuple: "tuple", cst.Set: "set", cst.SetComp: "set", cst.SimpleString: "str",
              cst.FormattedString: "str", cst.ConcatenatedString: "str"}
_NOT_LIST_CALLS = {"builtins.tuple": "tuple", "builtins.set": "set", "builtins.frozenset": "frozenset",
                   "builtins.str": "str"}
# Calls that change a list's length in place: after one, the literal no longer says how long it is.
_RESIZING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear"}
_SIZE_ABORT = "Received data size doesn't match expected size"


class ObjectListMismatch(Rule):
    """
    ## What it does
    Flags a `broadcast_object_list` (`torch.distributed` or accelerate) whose list does not fit
    the contract that every rank passes a list of the same length:

    - the list has a different length on the source rank and on the others, as the code writes
      it: `[config, vocab]` on the main process, `[None]` elsewhere;
    - the argument is not a list on the receiving ranks: a tuple (`(config,)`, `tuple(items)`),
      a set or a string, which cannot be assigned into by index.

    Lengths are compared only where every assignment reaching the call is a list literal (or
    `[None] * 3`, `[None for _ in range(3)]`) and the list is not resized afterwards (`append`,
    `extend`, `+=`, ...).

    - the list's length comes from what differs between ranks (analysis/divergence.py): a rank's
      own share (`[None] * len(items[rank::world])`, `list(my_record)` with `my_record` built
      from it), or a helper that returns list literals of different lengths under a rank test
      (`return [config, vocab]` on the source, `return [None]` elsewhere), so the source's and a
      receiver's lengths can differ. A length set in a rank's own branch (`if rank == 0: objects = list(items)`) is judged by the literal lengths above.

    ## Why is this bad?
    The receiving ranks learn nothing about the source's list before the call: each allocates
    one size slot per element of its own list, receives the source's sizes into them, then
    assigns the unpickled objects into its list by index. With lists of different lengths,
    measured with gloo on 2 processes (`[a, b]` on the source, `[None]` elsewhere), the receiver
    aborts with `… 16 vs 8. Received data size doesn't match expected size`; a longer receiver
    list reads garbage sizes. A tuple works on the source rank and fails on every receiver with
    `TypeError: 'tuple' object does not support item assignment` (torch and accelerate both
    assign into the list). In a single process accelerate returns its argument untouched, so
    tests without several processes never see either.

    ## Example
    ```python
    if accelerator.is_main_process:
        payload = [config, vocab]
    else:
        payload = [None]
    config, vocab = broadcast_object_list(payload)

    step, seed = broadcast_object_list((step, seed))
    ```

    ## Use instead
    ```python
    if accelerator.is_main_process:
        payload = [config, vocab]
    else:
        payload = [None, None]
    config, vocab = broadcast_object_list(payload)

    step, seed = broadcast_object_list([step, seed])
    ```

    ## Fix safety
    For a length mismatch where the receiving ranks' list holds only `None` placeholders, the fix
    gives it as many `None`s as the source sends: safe, since every slot is overwritten by the
    broadcast and the placeholders are never meant to be read. A tuple literal whose result is
    used (`a, b = broadcast_object_list((a, b))`) becomes a list literal: unsafe, since the source
    rank then gets a list back where it got its tuple, which code that hashes or compares the
    result would notice. A tuple passed to `torch.distributed.broadcast_object_list`, or whose
    result is discarded, has no fix: a list literal there would be a temporary whose received
    values are lost, so the list needs a name to be read from.

    ## References
    - [torch.distributed.broadcast_object_list](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast_object_list)
    - [accelerate.utils.broadcast_object_list](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast_object_list)
    """

    code = "BCL013"
    VALID = (
        # One generated sequence per prompt: as many objects on every rank, whatever their lengths.
        Valid("def share(model, prompts):\n    ids = model.generate(prompts)\n"
              "    dist.broadcast_object_list(ids, src=0)"),
        Valid("def agree(root):\n    names = [None] * len(os.listdir(root))\n    dist.broadcast_object_list(names, src=0)"),
        Valid("def payload(src):\n    if dist.get_rank() == src:\n        return [load_config(), load_vocab()]\n"
              "    return [None, None]\ndef share(src=0):\n    objs = payload(src)\n"
              "    dist.broadcast_object_list(objs, src=src)"),
        Valid("payload = [None, None]\nif accelerator.is_main_process:\n    payload = [cfg, vocab]\n"
              "cfg, vocab = broadcast_object_list(payload)"),
        Valid("objs = [cfg] if rank == 0 else [None]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [None] * 2\nif rank == 0:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("step, seed = broadcast_object_list([step, seed])"),
        Valid("def f(objs):\n    dist.broadcast_object_list(objs, src=0)"),
        Valid("def f(items):\n    objs = list(items) if rank == 0 else [None] * len(items)\n"
              "    dist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [None]\nif rank == 0:\n    objs = []\n    objs.append(cfg)\ndist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [None, None]\nif rank == 0:\n    objs = [cfg]\n    objs += [vocab]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [None] * n\nif rank == 0:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [None]\nif rank == 1:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=src)"),
        Valid("objs = (cfg,) if rank == 0 else [None]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("state = broadcast_object_list({'step': step})"),
        Valid("objs = [None for _ in range(2)]\nif rank == 0:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [None for _ in range(n)]\nif rank == 0:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=0)"),
        Valid("objs = [x for x in items]\nif rank == 0:\n    objs = [cfg]\ndist.broadcast_object_list(objs, src=0)"),
    )
    INVALID = (
        Invalid("def agree(root):\n    local = os.path.join(root, f'node{dist.get_rank()}')\n"
                "    names = [None] * len(os.listdir(local))\n    dist.broadcast_object_list(names, src=0)",
                expected_message="'names' can hold a different number of items on different ranks (it checks a path "
                "named after the rank): broadcast_object_list() needs one length on every rank, and under gloo the "
                "receivers abort (\"Received data size doesn't match expected size\")", range=(4, 5, 4, 45)),
        Invalid("def payload(src):\n    if dist.get_rank() == src:\n        return [load_config(), load_vocab()]\n"
                "    return [None]\ndef share(src=0):\n    objs = payload(src)\n"
                "    dist.broadcast_object_list(objs, src=src)",
                expected_message="'objs' can hold a different number of items on different ranks ('payload()' returns "
                "something else on some ranks): broadcast_object_list() needs one length on every rank, and under "
                "gloo the receivers abort (\"Received data size doesn't match expected size\")", range=(7, 5, 7, 46)),
        Invalid("def f(items):\n    mine = items[rank::dist.get_world_size()]\n"
                "    objs = list(mine) if rank == 0 else [None] * len(mine)\n    dist.broadcast_object_list(objs, src=0)",
                expected_message="'objs' can hold a different number of items on different ranks (each rank "
                "takes every world-th item from its rank on, and the shares differ by one item unless they divide "
                "evenly): broadcast_object_list() needs one length on every rank, and under gloo the receivers "
                "abort (\"Received data size doesn't match expected size\")",
                range=(4, 5, 4, 44)),
        Invalid("if accelerator.is_main_process:\n    payload = [cfg, vocab]\nelse:\n    payload = [None]\n"
                "cfg, vocab = broadcast_object_list(payload)",
                expected_message="'payload' holds 2 objects on source rank 0 but 1 object on ranks where "
                "'accelerator.is_main_process' is false: broadcast_object_list() needs one length on "
                'every rank, and under gloo the receivers abort ("Received data size doesn\'t match '
                'expected size")', range=(5, 14, 5, 44),
                expected_replacement="if accelerator.is_main_process:\n    payload = [cfg, vocab]\nelse:\n"
                "    payload = [None, None]\ncfg, vocab = broadcast_object_list(payload)"),
        Invalid("objs = [None] * 3\nif rank == 0:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=0)",
                expected_message="'objs' holds 2 objects on source rank 0 but 3 objects on ranks where 'rank == 0' is "
                'false: broadcast_object_list() needs one length on every rank, and under gloo the '
                'receivers abort ("Received data size doesn\'t match expected size")', range=(4, 1, 4, 40),
                expected_replacement="objs = [None, None]\nif rank == 0:\n    objs = [cfg, vocab]\n"
                "dist.broadcast_object_list(objs, src=0)"),
        Invalid("objs = [cfg, vocab] if rank == 0 else [None]\ndist.broadcast_object_list(objs, src=0)",
                expected_message="'objs' holds 2 objects on source rank 0 but 1 object on ranks where 'rank == 0' is "
                'false: broadcast_object_list() needs one length on every rank, and under gloo the '
                'receivers abort ("Received data size doesn\'t match expected size")', range=(2, 1, 2, 40),
                expected_replacement="objs = [cfg, vocab] if rank == 0 else [None, None]\n"
                "dist.broadcast_object_list(objs, src=0)"),
        Invalid("objs = [step]\nif rank == 0:\n    objs = [step, cfg]\ndist.broadcast_object_list(objs, src=0)",
                expected_message="'objs' holds 2 objects on source rank 0 but 1 object on ranks where 'rank == 0' is "
                'false: broadcast_object_list() needs one length on every rank, and under gloo the '
                'receivers abort ("Received data size doesn\'t match expected size")', range=(4, 1, 4, 40)),
        Invalid("objs = [None for _ in range(3)]\nif rank == 0:\n    objs = [cfg, vocab]\ndist.broadcast_object_list(objs, src=0)",
                expected_message="'objs' holds 2 objects on source rank 0 but 3 objects on ranks where 'rank "
                "== 0' is false: broadcast_object_list() needs one length on every rank, and "
                'under gloo the receivers abort ("Received data size doesn\'t match expected '
                'size")', range=(4, 1, 4, 40)),
        Invalid("step, seed = broadcast_object_list((step, seed))",
                expected_message='broadcast_object_list() is given (step, seed), a tuple, not a list: the '
                'receiving ranks raise "TypeError: \'tuple\' object does not support item '
                'assignment"', range=(1, 14, 1, 49),
                expected_replacement="step, seed = broadcast_object_list([step, seed])"),
        Invalid("objs = (cfg,)\ndist.broadcast_object_list(objs, src=0)",
                expected_message="broadcast_object_list() is given 'objs' = (cfg,), a tuple, not a list: the receiving "
                'ranks raise "TypeError: \'tuple\' object does not support item assignment"', range=(2, 1, 2, 40)),
        Invalid("dist.broadcast_object_list((cfg,), src=0)",
                expected_message='broadcast_object_list() is given (cfg,), a tuple, not a list: the receiving '
                'ranks raise "TypeError: \'tuple\' object does not support item assignment"', range=(1, 1, 1, 42)),
        Invalid("broadcast_object_list((cfg,))",
                expected_message='broadcast_object_list() is given (cfg,), a tuple, not a list: the receiving '
                'ranks raise "TypeError: \'tuple\' object does not support item assignment"', range=(1, 1, 1, 30)),
        Invalid("state = broadcast_object_list({step, seed})",
                expected_message='broadcast_object_list() is given {step, seed}, a set, not a list: the '
                'receiving ranks raise "TypeError: \'set\' object does not support item '
                'assignment"', range=(1, 9, 1, 44)),
        Invalid("name = broadcast_object_list(f'run-{step}')",
                expected_message="broadcast_object_list() is given f'run-{step}', a str, not a list: the receiving ranks "
                'raise "TypeError: \'str\' object does not support item assignment"', range=(1, 8, 1, 44)),
        Invalid("objs = tuple(items)\ndist.broadcast_object_list(objs, src=0)",
                expected_message="broadcast_object_list() is given 'objs' = tuple(items), a tuple, not a list: the "
                'receiving ranks raise "TypeError: \'tuple\' object does not support item assignment"', range=(2, 1, 2, 40)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        for site in analysis.broadcasts():
            if site.api.payload != apis.OBJECTS or site.payload is None or not site.reached:
                continue
            report = _not_a_list(analysis, site) or _length_mismatch(analysis, site) or _varying_length(analysis, site)
            if report is not None:
                yield report


# -- not a list -----------------------------------------------------------------------------
def _not_a_list(analysis: ModuleAnalysis, site: CallSite) -> Optional[Report]:
    """A report when the argument is certainly not a list on some receiving rank."""
    # With an unknown source, every rank must pass a non-list for one of them to be a receiver.
    worlds = [world for world in site.reached if world.rank != site.source_rank]
    found = None
    for world in worlds:
        values = analysis.values_in_world(site, site.payload, world)
        kinds = [_not_list_kind(analysis, value) for value in values or ()]
        if values and None not in kinds:
            found = (values[0], kinds[0])
        elif site.source_rank is None:
            return None  # with an unknown source, a list here may be the receivers'
    if found is None:
        return None
    value, kind = found
    shown = f"'{analysis.code(site.payload)}' = {_short(analysis, value)}" if value is not site.payload \
        else _short(analysis, value)
    article = "an" if kind[0] in "aeiou" else "a"
    message = (f"{site.api.short_name}() is given {shown}, {article} {kind}, not a list: the receiving ranks "
               f"raise \"TypeError: '{kind}' object does not support item assignment\"")
    return Report(site.call, message, _tuple_fix(analysis, site, value), _not_a_list_help(site, kind))


def _not_list_kind(analysis: ModuleAnalysis, value: cst.BaseExpression) -> Optional[str]:
    kind = _NOT_LISTS.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, cst.Call):
        return next((_NOT_LIST_CALLS[q] for q in analysis.qualified_names(value) if q in _NOT_LIST_CALLS), None)
    return None


def _not_a_list_help(site: CallSite, kind: str) -> str:
    if _result_used(site):
        return f"Pass a list: [...] instead of the {kind}"
    return ("Pass a list held in a name, e.g. objects = [a, b]; broadcast_object_list(objects); "
            "then read the received values from objects")


def _tuple_fix(analysis: ModuleAnalysis, site: CallSite, value: cst.BaseExpression) -> Optional[Fix]:
    """`(a, b)` -> `[a, b]`, only where the call's result is what the code reads."""
    if value is not site.payload or not isinstance(value, cst.Tuple) or not _result_used(site):
        return None
    if any(not isinstance(element, cst.Element) for element in value.elements):
        return None
    items = ", ".join(analysis.code(element.value) for element in value.elements)
    return Fix(UNSAFE, "Pass a list instead of the tuple", (_replace_parenthesized(analysis, value, f"[{items}]"),))


def _replace_parenthesized(analysis: ModuleAnalysis, node: cst.Tuple, content: str) -> Edit:
    """Replace `node` with its parentheses, which LibCST's positions leave out."""
    where = analysis.position(node)
    before = analysis.line_text(where.start.line)[:where.start.column]
    after = analysis.line_text(where.end.line)[where.end.column:]
    widen = 1 if node.lpar and before.endswith("(") and after.startswith(")") else 0
    return Edit(where.start.line, where.start.column + 1 - widen, where.end.line,
                where.end.column + 1 + widen, content)


def _result_used(site: CallSite) -> bool:
    """accelerate returns the filled list; torch returns None, and a bare call drops the result."""
    return not site.api.returns_none and not is_bare_call(site.statement, site.call)


# -- lengths --------------------------------------------------------------------------------
def _length_mismatch(analysis: ModuleAnalysis, site: CallSite) -> Optional[Report]:
    if site.source_rank is None or not isinstance(site.payload, cst.Name):
        return None
    name = site.payload.value
    if _resized(site.scope, name):
        return None
    lengths = {world: _lengths(analysis, site, world) for world in site.reached}
    sent = next((found for world, found in lengths.items() if world.rank == site.source_rank), None)
    if not sent:
        return None

    def short(definition, world) -> bool:
        received = lengths.get(world)
        return world.rank != site.source_rank and bool(received) and not received & sent

    split = analysis.split_ranks(site, name, short)
    if split is None:
        return None
    received = {n for world in split.broken_worlds for n in lengths[world]}
    message = (f"'{name}' holds {_count(sent)} on source rank {site.source_rank} but {_count(received)} "
               f"on ranks {split.where}: {site.api.short_name}() needs one length on every rank, and "
               f"under gloo the receivers abort (\"{_SIZE_ABORT}\")")
    help_text = f"Give '{name}' as many placeholders on every rank as the source sends"
    return Report(site.call, message, _length_fix(analysis, split, sent), help_text)


def _varying_length(analysis: ModuleAnalysis, site: CallSite) -> Optional[Report]:
    """The list's length comes from what differs between ranks (`[None] * len(my_items)` with
    `my_items` a rank's own share): the source's and a receiver's lengths can differ."""
    # How many objects, not how long each is: generate()'s sequences are one per prompt everywhere.
    reason = counted(analysis.divergence.length_at(site.call, site.payload))
    if reason is None or reason == CONTROL:
        return None  # set in a rank's own branch: the usual source/receiver split, judged above
    name = analysis.code(site.payload)
    message = (f"'{name}' can hold a different number of items on different ranks ({reason}): "
               f"{site.api.short_name}() needs one length on every rank, and under gloo the receivers "
               f"abort (\"{_SIZE_ABORT}\")")
    return Report(site.call, message, help="Agree on the length first: broadcast it from the source rank, "
                  "then size every rank's list with it")


def _lengths(analysis: ModuleAnalysis, site: CallSite, world: World) -> Optional[set[int]]:
    """Every length the list may have in `world`, or None when one is unknown."""
    values = analysis.values_in_world(site, site.payload, world)
    if not values:
        return None
    lengths = {_literal_length(value) for value in values}
    return None if None in lengths else lengths


def _literal_length(value: cst.BaseExpression) -> Optional[int]:
    """2 for `[a, b]`, 3 for `[None] * 3` or `[None for _ in range(3)]`; None for anything else."""
    if isinstance(value, cst.ListComp):
        return _range_length(value.for_in)
    if isinstance(value, cst.List):
        if any(not isinstance(element, cst.Element) for element in value.elements):
            return None  # `[*items]`
        return len(value.elements)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        for items, count in ((value.left, value.right), (value.right, value.left)):
            length = _literal_length(items)
            if length is not None and isinstance(count, cst.Integer):
                return length * int(count.value, 0)
    return None


def _range_length(for_in: cst.CompFor) -> Optional[int]:
    """n for `for _ in range(n)` with a literal n, no filter and no inner loop."""
    iterated = for_in.iter
    if for_in.ifs or for_in.inner_for_in is not None or not isinstance(iterated, cst.Call):
        return None
    if not (isinstance(iterated.func, cst.Name) and iterated.func.value == "range") or len(iterated.args) != 1:
        return None
    count = iterated.args[0].value
    return int(count.value, 0) if isinstance(count, cst.Integer) else None


def _resized(scope: cst.CSTNode, name: str) -> bool:
    """Whether the scope changes the length of the list `name` holds after building it."""
    stack = [scope]
    while stack:
        node = stack.pop()
        if _resizes(node, name):
            return True
        stack.extend(children(node))
    return False


def _resizes(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        receiver = node.func.value
        return (isinstance(receiver, cst.Name) and receiver.value == name
                and node.func.attr.value in _RESIZING_METHODS)
    if isinstance(node, cst.AugAssign):
        return isinstance(node.target, cst.Name) and node.target.value == name
    if isinstance(node, (cst.Del, cst.AssignTarget)):
        target = node.target
        return isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and \
            target.value.value == name and (isinstance(node, cst.Del) or _is_sliced(target))
    return False


def _is_sliced(subscript: cst.Subscript) -> bool:
    return any(isinstance(element.slice, cst.Slice) for element in subscript.slice)


def _length_fix(analysis: ModuleAnalysis, split, sent: set[int]) -> Optional[Fix]:
    """Replace the receivers' all-None lists with as many Nones as the source sends."""
    if len(sent) != 1:
        return None
    count = next(iter(sent))
    edits = []
    for definition in split.broken_definitions:
        for value in _placeholder_lists(definition.value):
            if not _only_nones(value):
                return None
            edits.append(replace_node(analysis, value, "[" + ", ".join(["None"] * count) + "]"))
    if not edits:
        return None
    return Fix(SAFE, f"Give the list {count} None placeholders on every rank", tuple(dict.fromkeys(edits)))


def _placeholder_lists(value: Optional[cst.BaseExpression]) -> list[cst.BaseExpression]:
    """The list literals a definition's value may produce: `[None]`, or both arms of an IfExp."""
    if value is None:
        return []
    if isinstance(value, cst.IfExp):
        return [v for v in (*_placeholder_lists(value.body), *_placeholder_lists(value.orelse))
                if _only_nones(v)]
    return [value]


def _only_nones(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.List):
        return bool(value.elements) and all(
            isinstance(element, cst.Element) and is_none(element.value) for element in value.elements)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return _only_nones(value.left) or _only_nones(value.right)
    return False


def _count(lengths: set[int]) -> str:
    ordered = sorted(lengths)
    numbers = " or ".join(str(n) for n in ordered)
    return f"{numbers} object{'s' if ordered != [1] else ''}"


def _short(analysis: ModuleAnalysis, value: cst.BaseExpression) -> str:
    code = " ".join(analysis.code(value).split())
    return code if len(code) <= 40 else code[:37] + "..."

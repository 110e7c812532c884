"""Hypothesis strategies for the property tests: programs built from the broadcast patterns that
bcast-lint analyses, and arbitrary valid Python (hypothesmith) with a broadcast appended so that
the analysis, not only the pre-filter, runs on it.

A generated program is text composed from snippets: imports with aliases, rank conditions,
placeholders, collectives, and the statements that make data flow interesting (branches, loops,
try/except, match, walrus, nested and async functions, decorators, classes). Every program
compiles; `tests/test_properties.py` checks that too, so a broken strategy cannot hide behind
`assume`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

HEADER = (
    "import os\n"
    "import torch\n"
    "import torch.distributed as dist\n"
    "import torch.distributed\n"
    "import accelerate.utils as au\n"
    "import deepspeed.comm as ds\n"
    "from torch.distributed import broadcast as bc, broadcast_object_list\n"
    "from accelerate.utils import broadcast, gather\n"
    "from accelerate import Accelerator, PartialState\n"
    "accelerator = Accelerator()\n"
    "state = PartialState()\n"
    "rank = dist.get_rank()\n"
)

NAMES = ("x", "ids", "buf", "objs", "t")

CONDITIONS = (
    "accelerator.is_main_process",
    "not accelerator.is_main_process",
    "accelerator.is_local_main_process",
    "state.is_last_process",
    "dist.get_rank() == 0",
    "torch.distributed.get_rank() != 0",
    "rank == 1",
    "rank > 0",
    "0 == rank",
    "accelerator.process_index == 2",
    "state.local_process_index != 0",
    "int(os.environ['RANK']) == 0",
    "int(os.environ.get('LOCAL_RANK', 0)) == 0",
    "trainer.is_world_process_zero()",
    "(r := dist.get_rank()) == 0",
    "rank == 0 and flag",
    "flag",
    "x is None",
)

VALUES = (
    "None",
    "[None]",
    "torch.empty(4)",
    "torch.empty(n, dtype=torch.int64, device=accelerator.device)",
    "torch.empty_like({other})",
    "{other}.new_empty((2, 3))",
    "torch.Tensor(4)",
    "torch.zeros(4)",
    "torch.zeros(4, 2, dtype=torch.float16)",
    "torch.zeros(4, device='cuda:0')",
    "torch.zeros(4, device=torch.device('cuda', 1))",
    "torch.zeros(4).cuda(0)",
    "torch.zeros(4).to(0)",
    "torch.ones((2, 3)).long()",
    "torch.randn(4)",
    "torch.randint(0, 10, (8,))",
    "torch.tensor([1, 2, 3])",
    "torch.tensor(0.1).item()",
    "len(data)",
    "f'run-{{rank}}'",
    "{{'ids': {other}, 'epoch': 3}}",
    "[{other}, {other}]",
    "{other}.clone()",
    "{other}[:, 0]",
    "load_ids()",
    "torch.randn(4) if rank == 0 else None",
    "torch.randn(4) if accelerator.is_main_process else torch.zeros(4, 2)",
    "(y := torch.zeros(3))",
    "await fetch()",
    "lambda: {other}",
    "[v for v in range(3) if (w := v)]",
)

COLLECTIVES = (
    "broadcast({name})",
    "{name} = broadcast({name})",
    "{name} = broadcast({name}, from_process=1)",
    "au.broadcast({name}, from_process=0)",
    "dist.broadcast({name}, 0)",
    "dist.broadcast({name}, src=1)",
    "dist.broadcast(tensor={name}, src=0)",
    "{name} = dist.broadcast({name}, 0)",
    "torch.distributed.broadcast({name}, src=rank)",
    "bc({name}, 0, async_op=True).wait()",
    "ds.broadcast({name}, 0)",
    "dist.broadcast({name}.clone(), 0)",
    "dist.broadcast({name}[:, ::2], 0)",
    "dist.broadcast([{name}], 0)",
    "broadcast_object_list([{name}])",
    "broadcast_object_list({name}, src=0)",
    "dist.broadcast_object_list([{name}, None], src=0)",
    "{name} = broadcast_object_list([{name}])[0]",
    "dist.all_reduce({name})",
    "dist.barrier()",
    "gather({name})",
    "accelerator.wait_for_everyone()",
    "{name} = accelerator.gather_for_metrics({name})",
    "print(dist.broadcast({name}, 0))",
)


PLACEHOLDERS = (
    "None", "[None]", "torch.empty(4)", "torch.empty_like(y)", "y.new_empty(4)", "torch.Tensor(4)",
    "torch.zeros(4)", "torch.zeros(8, dtype=torch.int64)", "torch.zeros(4, device='cuda:0')",
    "torch.zeros(4).cuda(0)", "torch.zeros(4, 2)", "torch.zeros(n, device=accelerator.device)",
)
SOURCES = (
    "torch.randn(4)", "torch.randint(0, 10, (8,))", "torch.tensor(lengths, dtype=torch.int64)",
    "load_ids()", "torch.rand(3).long()", "str(rank)", "torch.randn(4).to('cuda:1')",
)


@dataclass(frozen=True)
class Context:
    """Where a block is being generated: what statements are legal there."""

    depth: int
    in_function: bool = False
    in_async: bool = False
    in_loop: bool = False


def _indent(text: str, level: int = 1) -> str:
    pad = "    " * level
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


@st.composite
def value(draw) -> str:
    template = draw(st.sampled_from(VALUES))
    return template.format(other=draw(st.sampled_from(NAMES)))


@st.composite
def collective(draw) -> str:
    return draw(st.sampled_from(COLLECTIVES)).format(name=draw(st.sampled_from(NAMES)))


@st.composite
def simple_statement(draw, context: Context) -> str:
    name = draw(st.sampled_from(NAMES))
    choices = [
        f"{name} = {draw(value())}",
        f"{name}: torch.Tensor = {draw(value())}",
        f"{name} += 1",
        f"{name}[0] = {draw(value())}",
        f"{name}.copy_({draw(st.sampled_from(NAMES))})",
        f"del {name}",
        f"{draw(st.sampled_from(NAMES))}, {name} = {draw(value())}, {draw(value())}",
        draw(collective()),
        draw(collective()),
        "pass",
        f"assert {name} is not None",
        f"raise RuntimeError({name!r})",
        "import torch.distributed as dist",
        "from accelerate.utils import broadcast as broadcast",
    ]
    if context.in_loop:
        choices += ["break", "continue"]
    if context.in_function:
        choices += ["return", f"return {name}", f"return dist.broadcast({name}, 0)"]
    if context.in_async:
        choices += [f"{name} = await ({draw(value())})", "await asyncio.sleep(0)"]
    statement = draw(st.sampled_from(choices))
    # `await` inside a value is only legal in an async function.
    return statement if context.in_async or "await" not in statement else "pass"


@st.composite
def compound_statement(draw, context: Context) -> str:
    inner = Context(context.depth + 1, context.in_function, context.in_async, context.in_loop)
    looped = Context(context.depth + 1, context.in_function, context.in_async, True)
    condition = draw(st.sampled_from(CONDITIONS))
    name = draw(st.sampled_from(NAMES))
    kind = draw(st.sampled_from((
        "if", "if-else", "if-elif", "for", "while", "try", "try-finally", "with", "match",
        "walrus", "def", "async-def", "class", "decorated", "pattern", "pattern",
    )))
    if kind == "if":
        return f"if {condition}:\n{_indent(draw(block(inner)))}"
    if kind == "if-else":
        return f"if {condition}:\n{_indent(draw(block(inner)))}else:\n{_indent(draw(block(inner)))}"
    if kind == "if-elif":
        other = draw(st.sampled_from(CONDITIONS))
        return (f"if {condition}:\n{_indent(draw(block(inner)))}elif {other}:\n"
                f"{_indent(draw(block(inner)))}")
    if kind == "for":
        loop = "async for" if context.in_async and draw(st.booleans()) else "for"
        return f"{loop} i in range(3):\n{_indent(draw(block(looped)))}else:\n{_indent(draw(block(inner)))}"
    if kind == "while":
        return f"while {condition}:\n{_indent(draw(block(looped)))}"
    if kind == "try":
        return (f"try:\n{_indent(draw(block(inner)))}except (RuntimeError, ValueError) as error:\n"
                f"{_indent(draw(block(inner)))}else:\n{_indent(draw(block(inner)))}")
    if kind == "try-finally":
        return f"try:\n{_indent(draw(block(inner)))}finally:\n{_indent(draw(block(inner)))}"
    if kind == "with":
        manager = draw(st.sampled_from((
            "accelerator.main_process_first()", "torch.no_grad()", "open(path) as handle",
            "accelerator.local_main_process_first()",
        )))
        prefix = "async with" if context.in_async and draw(st.booleans()) else "with"
        return f"{prefix} {manager}:\n{_indent(draw(block(inner)))}"
    if kind == "match":
        return (f"match {name}:\n    case None:\n{_indent(draw(block(inner)), 2)}"
                f"    case [a, *rest] if {condition}:\n{_indent(draw(block(inner)), 2)}"
                f"    case _:\n{_indent(draw(block(inner)), 2)}")
    if kind == "pattern":
        return draw(rank_pattern(inner))
    if kind == "walrus":
        bound = draw(value()).replace("await ", "")
        return f"if ({name} := {bound}) is not None:\n{_indent(draw(block(inner)))}"
    return draw(definition(context, kind))


@st.composite
def rank_pattern(draw, context: Context) -> str:
    """The shape every rule is about: a placeholder, a rank-conditional source, a collective."""
    name = draw(st.sampled_from(NAMES))
    lines = []
    if draw(st.booleans()):
        lines.append(f"{name} = {draw(st.sampled_from(PLACEHOLDERS))}\n")
    source = f"{name} = {draw(st.sampled_from(SOURCES))}\n"
    if draw(st.booleans()):
        source += draw(block(context))
    condition = draw(st.sampled_from(CONDITIONS))
    if draw(st.booleans()):
        lines.append(f"if {condition}:\n{_indent(source)}")
    else:
        other = f"{name} = {draw(st.sampled_from(PLACEHOLDERS))}\n"
        lines.append(f"if {condition}:\n{_indent(source)}else:\n{_indent(other)}")
    lines.append(draw(st.sampled_from(COLLECTIVES)).format(name=name) + "\n")
    return "".join(lines)


@st.composite
def definition(draw, context: Context, kind: str) -> str:
    is_async = kind == "async-def" or (kind == "decorated" and draw(st.booleans()))
    body_context = Context(context.depth + 1, in_function=True, in_async=is_async)
    decorators = ""
    if kind == "decorated":
        decorators = "".join(f"@{d}\n" for d in draw(st.lists(st.sampled_from((
            "accelerator.on_main_process", "accelerator.on_local_main_process", "rank_zero_only",
            "torch.no_grad()", "accelerator.on_process(process_index=1)", "staticmethod",
            "functools.lru_cache(maxsize=None)",
        )), min_size=1, max_size=2)))
    if kind == "class":
        method = draw(definition(Context(context.depth + 1), "def"))
        return f"class Trainer:\n    buf = None\n{_indent(method)}"
    keyword = "async def" if is_async else "def"
    name = draw(st.sampled_from(("sync", "evaluate", "share", "inner")))
    params = draw(st.sampled_from(("", "x", "self, x", "x, *, src=0", "ids=None, **kw")))
    body = draw(block(body_context))
    return f"{decorators}{keyword} {name}({params}):\n{_indent(body)}"


@st.composite
def statement(draw, context: Context) -> str:
    if context.depth < 3 and draw(st.integers(0, 2)) == 0:
        return draw(compound_statement(context))
    return draw(simple_statement(context)) + "\n"


@st.composite
def block(draw, context: Context) -> str:
    statements = draw(st.lists(statement(context), min_size=1, max_size=4))
    return "".join(statements)


@st.composite
def broadcast_programs(draw) -> str:
    """A whole module: the header, then statements and functions built from broadcast patterns."""
    body = draw(block(Context(0)))
    kinds = draw(st.lists(st.sampled_from(("def", "async-def", "decorated", "class")), max_size=3))
    functions = "".join("\n\n" + draw(definition(Context(0), kind)) for kind in kinds)
    return HEADER + body + functions

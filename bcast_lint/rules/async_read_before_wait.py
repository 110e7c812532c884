from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.apis import TORCH_MODULES
from bcast_lint.analysis.expressions import argument_value, last_name
from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.analysis.walk import Visitor, children
from bcast_lint.fixes.edits import insert_before_statement
from bcast_lint.model import SAFE, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# Per torch.distributed function: the arguments (position, keyword) the transfer writes into,
# whose reads and writes race it, and those it only reads from, whose writes race it.
_OUTPUTS_INPUTS = {
    "broadcast": (((0, "tensor"),), ()),
    "all_reduce": (((0, "tensor"),), ()),
    "reduce": (((0, "tensor"),), ()),
    "all_gather": (((0, "tensor_list"),), ((1, "tensor"),)),
    "all_gather_into_tensor": (((0, "output_tensor"),), ((1, "input_tensor"),)),
    "reduce_scatter": (((0, "output"),), ((1, "input_list"),)),
    "reduce_scatter_tensor": (((0, "output"),), ((1, "input"),)),
    "all_to_all": (((0, "output_tensor_list"),), ((1, "input_tensor_list"),)),
    "gather": (((1, "gather_list"),), ((0, "tensor"),)),
    "scatter": (((0, "tensor"),), ((1, "scatter_list"),)),
    "isend": ((), ((0, "tensor"),)),
    "irecv": (((0, "tensor"),), ()),
}
_ALWAYS_ASYNC = frozenset({"isend", "irecv"})  # they return a Work handle without async_op
_REDUCTIONS = frozenset({"all_reduce", "reduce", "reduce_scatter", "reduce_scatter_tensor"})
_P2P_NAMES = frozenset(f"{module}.{name}" for module in TORCH_MODULES for name in _ALWAYS_ASYNC)

# What a tensor's metadata says is fixed when the transfer starts: reading it races nothing.
_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout",
                                  "is_sparse", "is_leaf", "names"})
_METADATA_METHODS = frozenset({"size", "dim", "numel", "nelement", "element_size", "stride", "is_contiguous",
                               "data_ptr", "get_device", "is_floating_point", "is_complex", "storage_offset"})
_METADATA_FUNCTIONS = frozenset({"len", "id", "isinstance", "type", "hasattr"})
# Calls that keep a reference to the tensor without reading it.
_STORING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "put"})
# Calls after which the transfer may have finished: any `.wait()` (the handle may have been put in
# a list), `torch.cuda.synchronize()` and the stream and event `synchronize()` methods.
_WAITING_METHODS = frozenset({"wait", "synchronize"})
_ENDS = (cst.Return, cst.Raise, cst.Break, cst.Continue)


@dataclass(frozen=True)
class _Start:
    """A collective started asynchronously: its call, the statement holding it, its handle's name
    (None when the handle is discarded), and the local names of the tensors it writes into
    (`outputs`) and reads from (`inputs`)."""

    call: cst.Call
    short_name: str
    line: cst.CSTNode  # the SimpleStatementLine holding the call
    handle: Optional[str]
    outputs: frozenset
    inputs: frozenset


@dataclass(frozen=True)
class _Access:
    name: cst.Name
    write: bool
    line: cst.CSTNode  # the statement of the started call's block that holds the access


class AsyncReadBeforeWait(Rule):
    """
    ## What it does
    Flags a tensor read or written before the `work.wait()` of a `torch.distributed` collective
    that is still transferring it, one started with `async_op=True` or an `isend`/`irecv` (always
    asynchronous). Reads are `t.sum()`, `print(t)`, `t + 1`, `t.item()` or passing `t` on; writes
    are `t += 1`, `t[:] = 0`, `t.copy_(x)`, `t.zero_()`. A handle that is never waited on, or
    thrown away (`dist.all_reduce(t, async_op=True)` as a statement), counts as not waited on.

    ## Why is this bad?
    With `async_op=True` the call returns as soon as the operation is queued; torch documents that
    only `wait()` on the returned handle blocks (for CPU collectives) until the operation has
    completed, or (for CUDA ones) until its output can be used on the default stream. Until then
    the tensor holds this rank's own input, or a partly reduced or received mix, depending on
    timing: a read sees a value that differs between ranks (measured: the ranks clip gradients by
    different norms), and a write races the transfer. Reading only metadata (`t.shape`, `t.dtype`,
    `t.device`, `t.numel()`, `len(t)`) is fine, and so is reading the input of a gather or a send.

    The linter reads each block of statements in order from the started call, and stops looking
    (saying nothing more) at the first statement that mentions the handle (a `wait()`, passing it
    on, storing it, returning it), calls any `.wait()` (a loop over handles) or `synchronize()`,
    runs a synchronous collective, or leaves the block (`return`, `raise`, `break`, `continue`).
    `torch.cuda.synchronize()` is not a documented substitute for `wait()` (it does nothing for a
    CPU tensor under gloo); it ends the search because on NCCL it waits for the communication
    stream too, and the linter cannot tell the backend. A collective started inside
    `with dist._coalescing_manager(...)` is not followed: its handle belongs to the block. An
    `isend`/`irecv` is seen only in a file and function that also call a collective the linter
    knows (the pre-filter looks for those).

    ## Example
    ```python
    work = dist.all_reduce(grad, async_op=True)
    norm = grad.norm()
    work.wait()
    ```

    ## Use instead
    ```python
    work = dist.all_reduce(grad, async_op=True)
    work.wait()
    norm = grad.norm()
    ```

    ## Fix safety
    Where the handle is a local name and the access is a later statement of the same block, the fix
    inserts `work.wait()` before that statement: safe. Waiting on a handle twice is allowed, and
    the only change is that the access sees the finished transfer, as intended; communication
    overlaps less with the code in between. A discarded handle, or an access on the same line as
    the call, has no fix.

    ## References
    - [Synchronous and asynchronous collective operations](https://pytorch.org/docs/stable/distributed.html#synchronous-and-asynchronous-collective-operations)
    - [torch.distributed.isend](https://pytorch.org/docs/stable/distributed.html#torch.distributed.isend)
    - [pytorch/pytorch#147309: what `work.wait()` synchronises](https://github.com/pytorch/pytorch/issues/147309)
    """

    code = "BCL016"
    VALID = (
        Valid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
other = torch.randn(4) * 2
work.wait()
print(grad.sum())
"""),
        Valid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
print(grad.shape, grad.dtype, grad.device, grad.numel(), len(grad))
work.wait()
"""),
        Valid("""\
grad, other = torch.ones(4), torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
print(other.sum())
work.wait()
"""),
        Valid("""\
def step(grad, ready):
    work = dist.all_reduce(grad, async_op=True)
    if ready:
        work.wait()
        print(grad.sum())
"""),
        Valid("""\
def step(grads):
    works = []
    for grad in grads:
        works.append(dist.all_reduce(grad, async_op=True))
    for w in works:
        w.wait()
    return [g.sum() for g in grads]
"""),
        Valid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=False)
print(grad.sum())
"""),
        Valid("""\
grad = torch.ones(4)
dist.all_reduce(grad)
print(grad.sum())
"""),
        Valid("""\
def start(grad, pending):
    work = dist.all_reduce(grad, async_op=True)
    pending.track(work)
    print(grad.sum())
"""),
        Valid("""\
def start(grad):
    work = dist.all_reduce(grad, async_op=True)
    return work
"""),
        Valid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
torch.cuda.synchronize()
print(grad.sum())
"""),
        Valid("""\
grad = torch.ones(4)
dist.all_reduce(grad, async_op=True)
dist.barrier()
print(grad.sum())
"""),
        Valid("""\
x = torch.ones(4)
out = [torch.zeros(4) for _ in range(2)]
work = dist.all_gather(out, x, async_op=True)
print(x.sum())
work.wait()
"""),
        Valid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
grad = torch.zeros(4)
print(grad.sum())
work.wait()
"""),
        Valid("""\
def hook(state, bucket):
    fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])
"""),
        Valid("""\
grad = torch.ones(4)
with dist._coalescing_manager(async_ops=True) as cm:
    dist.all_reduce(grad, async_op=True)
cm.wait()
print(grad.sum())
"""),
        Valid("""\
def reduce(grad, overlap):
    work = dist.all_reduce(grad, async_op=overlap)
    print(grad.sum())
    work.wait()
"""),
        Valid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
def report():
    print(grad.sum())
if grad is not None:
    work.wait()
"""),
        Valid("""\
def step(model, grad):
    work = dist.all_reduce(grad, async_op=True)
    norms = [p.grad.norm() for p in model.parameters()]
    clip(norms, grad=None)
    work.wait()
"""),
        Valid("""\
grad = torch.ones(4)
dist.all_reduce(grad, async_op=True).wait()
print(grad.sum())
"""),
        Valid("""\
def step(grad):
    work = dist.all_reduce(grad, async_op=True)
    try:
        other = torch.randn(4)
    finally:
        work.wait()
    return grad.sum() + other
"""),
    )
    INVALID = (
        Invalid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
total = grad.sum()
work.wait()
""", expected_message="'grad' is read (line 11) before the all_reduce() started at line 10 with async_op=True has "
            "finished (work.wait() at line 12): the read sees this rank's own partial values, and the ranks go on "
            "with different ones", range=(3, 9, 3, 13),
            expected_replacement="""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
work.wait()
total = grad.sum()
work.wait()
"""),
        Invalid("""\
buf = torch.zeros(4)
handle = dist.broadcast(buf, 0, async_op=True)
print(buf)
""", expected_message="'buf' is read (line 11) before the broadcast() started at line 10 with async_op=True has "
            "finished ('handle' is not waited on before it): the read sees the buffer's old contents, and the "
            "ranks go on with different ones", range=(3, 7, 3, 10),
            expected_replacement="""\
buf = torch.zeros(4)
handle = dist.broadcast(buf, 0, async_op=True)
handle.wait()
print(buf)
"""),
        Invalid("""\
grad = torch.ones(4)
dist.all_reduce(grad, async_op=True)
scaled = grad + 1
""", expected_message="'grad' is read (line 11) before the all_reduce() started at line 10 with async_op=True has "
            "finished (its Work handle is discarded, so nothing waits for it): the read sees this rank's own "
            "partial values, and the ranks go on with different ones", range=(3, 10, 3, 14)),
        Invalid("""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
grad += 1
work.wait()
""", expected_message="'grad' is written (line 11) before the all_reduce() started at line 10 with async_op=True "
            "has finished (work.wait() at line 12): the write races the transfer, so what the ranks end up with "
            "depends on timing", range=(3, 1, 3, 5),
            expected_replacement="""\
grad = torch.ones(4)
work = dist.all_reduce(grad, async_op=True)
work.wait()
grad += 1
work.wait()
"""),
        Invalid("""\
x = torch.ones(4)
out = [torch.zeros(4) for _ in range(2)]
work = dist.all_gather(out, x, async_op=True)
x.zero_()
work.wait()
""", expected_message="'x' is written (line 12) before the all_gather() started at line 11 with async_op=True has "
            "finished (work.wait() at line 13): the write races the transfer, so what the ranks end up with "
            "depends on timing", range=(4, 1, 4, 2),
            expected_replacement="""\
x = torch.ones(4)
out = [torch.zeros(4) for _ in range(2)]
work = dist.all_gather(out, x, async_op=True)
work.wait()
x.zero_()
work.wait()
"""),
        Invalid("""\
out = torch.zeros(8)
inp = torch.ones(4)
work = dist.all_gather_into_tensor(out, inp, async_op=True)
out[:] = 0
work.wait()
""", expected_message="'out' is written (line 12) before the all_gather_into_tensor() started at line 11 with "
            "async_op=True has finished (work.wait() at line 13): the write races the transfer, so what the ranks "
            "end up with depends on timing", range=(4, 1, 4, 4),
            expected_replacement="""\
out = torch.zeros(8)
inp = torch.ones(4)
work = dist.all_gather_into_tensor(out, inp, async_op=True)
work.wait()
out[:] = 0
work.wait()
"""),
        Invalid("""\
buf = torch.zeros(4)
dist.barrier()
req = dist.irecv(buf, src=0)
value = buf.item()
req.wait()
""", expected_message="'buf' is read (line 12) before the irecv() started at line 11 has finished (req.wait() at "
            "line 13): the read sees the buffer's old contents, and the ranks go on with different ones",
            range=(4, 9, 4, 12),
            expected_replacement="""\
buf = torch.zeros(4)
dist.barrier()
req = dist.irecv(buf, src=0)
req.wait()
value = buf.item()
req.wait()
"""),
        Invalid("""\
def train_step(model, loss):
    loss.backward()
    for p in model.parameters():
        grad = p.grad
        work = dist.all_reduce(grad, async_op=True)
        torch.nn.utils.clip_grad_norm_([grad], 1.0)
        work.wait()
""", expected_message="'grad' is read (line 14) before the all_reduce() started at line 13 with async_op=True has "
            "finished (work.wait() at line 15): the read sees this rank's own partial values, and the ranks go on "
            "with different ones", range=(6, 41, 6, 45),
            expected_replacement="""\
def train_step(model, loss):
    loss.backward()
    for p in model.parameters():
        grad = p.grad
        work = dist.all_reduce(grad, async_op=True)
        work.wait()
        torch.nn.utils.clip_grad_norm_([grad], 1.0)
        work.wait()
"""),
        Invalid("""\
from torch.distributed import all_reduce
grad = torch.ones(4)
work = all_reduce(grad, async_op=True); grad.copy_(torch.zeros(4))
work.wait()
""", expected_message="'grad' is written (line 11) before the all_reduce() started at line 11 with async_op=True "
            "has finished (work.wait() at line 12): the write races the transfer, so what the ranks end up with "
            "depends on timing", range=(3, 41, 3, 45)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        text = analysis.source.text
        if "async_op" not in text and "isend" not in text and "irecv" not in text:
            return
        blocks = _Blocks(analysis)
        blocks.walk(analysis.module)
        for units in blocks.found:
            yield from _check_block(analysis, units)


class _Blocks(Visitor):
    """Every block of statements, as units (the small statements of a line, or a compound
    statement) paired with the statement of the block that holds them, and with the started
    collectives found among them."""

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self.async_sites = {site.call: site for site in analysis.calls
                            if site.api.qualified_name.rsplit(".", 1)[0] in TORCH_MODULES
                            and site.api.short_name in _OUTPUTS_INPUTS and _passes_async_op(site.call)}
        self.found: list[list[tuple[cst.CSTNode, cst.CSTNode, Optional[_Start]]]] = []
        self._scopes: list[cst.CSTNode] = [analysis.module]
        self._coalescing = 0

    def visit_Module(self, node: cst.Module) -> None:
        self._block(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block(node.body)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_With(self, node: cst.With) -> None:
        self._coalescing += _is_coalescing(node)

    def leave_With(self, original_node: cst.With) -> None:
        self._coalescing -= _is_coalescing(original_node)

    def _block(self, body) -> None:
        units = []
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                units.extend((small, statement, self._start(small, statement)) for small in statement.body)
            else:
                units.append((statement, statement, None))
        if any(start is not None for _, _, start in units):
            self.found.append(units)

    def _start(self, small: cst.BaseSmallStatement, line: cst.SimpleStatementLine) -> Optional[_Start]:
        """The collective this statement starts asynchronously, as `work = call` or a bare `call`."""
        if self._coalescing:
            return None
        if isinstance(small, cst.Expr):
            call, handle = small.value, None
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                       cst.Name):
            call, handle = small.value, small.targets[0].target.value
        else:
            return None
        short_name = self._started(call) if isinstance(call, cst.Call) else None
        if short_name is None:
            return None
        outputs, inputs = _OUTPUTS_INPUTS[short_name]
        return _Start(call, short_name, line, handle, _names(call, outputs), _names(call, inputs))

    def _started(self, call: cst.Call) -> Optional[str]:
        site = self.async_sites.get(call)
        if site is not None:
            return site.api.short_name
        if last_name(call.func) in _ALWAYS_ASYNC:
            qualified = self.analysis.qualified_names(call, self._scopes[-1]) & _P2P_NAMES
            return next(iter(qualified)).rsplit(".", 1)[-1] if qualified else None
        return None


def _passes_async_op(call: cst.Call) -> bool:
    value = argument_value(call, None, "async_op")
    return isinstance(value, cst.Name) and value.value == "True"


def _is_coalescing(node: cst.With) -> bool:
    return any("coalescing" in (last_name(item.item) or "") for item in node.items)


def _names(call: cst.Call, arguments) -> frozenset:
    """The local names passed as these arguments, alone or as the items of a list or tuple."""
    names = set()
    for position, keyword in arguments:
        value = argument_value(call, position, keyword)
        items = [element.value for element in value.elements] if isinstance(value, (cst.List, cst.Tuple)) \
            else [value]
        names.update(item.value for item in items if isinstance(item, cst.Name))
    return frozenset(names)


def _check_block(analysis: ModuleAnalysis, units) -> Iterator[Report]:
    for index, (_, _, start) in enumerate(units):
        if start is not None:
            yield from _check_start(analysis, start, units[index + 1:])


def _check_start(analysis: ModuleAnalysis, start: _Start, later) -> Iterator[Report]:
    tracked = {name: False for name in start.outputs} | {name: True for name in start.inputs - start.outputs}
    synchronous = {site.call for site in analysis.calls if not _passes_async_op(site.call)}
    accesses: list[_Access] = []
    for unit, line, _ in later:
        if not tracked or _ends_window(start, unit, synchronous):
            break
        reported = {access.name.value for access in accesses}
        for name, write in _accesses(unit, set(tracked) - reported):
            if write or not tracked[name.value]:
                accesses.append(_Access(name, write, line))
                reported.add(name.value)
        for rebound in _rebound(unit):
            tracked.pop(rebound, None)
        if isinstance(unit, _ENDS):
            break
    wait_line = _wait_line(analysis, start, later)
    for number, access in enumerate(accesses):
        yield Report(access.name, _message(analysis, start, access, wait_line),
                     _fix(analysis, start, access) if number == 0 else None, _remedy(start, access))


def _ends_window(start: _Start, unit: cst.CSTNode, synchronous: set) -> bool:
    """Whether, by this statement, the transfer may have finished or the handle gone elsewhere:
    `synchronous` holds the collective calls that run to completion."""
    for node in _nodes(unit):
        if isinstance(node, cst.Name) and node.value == start.handle:
            return True
        if isinstance(node, cst.Call) and (last_name(node.func) in _WAITING_METHODS or node in synchronous):
            return True
        if isinstance(node, (cst.Yield, cst.Await)):
            return True
    return False


def _nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes that run with this statement: not those of functions, classes or lambdas it defines."""
    yield node
    for child in children(node):
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield from _nodes(child)


def _accesses(unit: cst.CSTNode, names: set) -> Iterator[tuple[cst.Name, bool]]:
    """Each use of one of `names` in the statement that touches its values, in source order, with
    whether it writes them."""
    stack: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode) -> Iterator[tuple[cst.Name, bool]]:
        if isinstance(node, cst.Name) and node.value in names and stack and not _names_no_variable(node, stack[-1]):
            kind = _kind(node, stack)
            if kind is not None:
                yield node, kind
        stack.append(node)
        for child in children(node):
            if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                yield from visit(child)
        stack.pop()

    yield from visit(unit)


def _names_no_variable(name: cst.Name, parent: cst.CSTNode) -> bool:
    """`p.grad`'s `grad`, `f(grad=...)`'s `grad`: the same word, not the local variable."""
    return (isinstance(parent, cst.Attribute) and parent.attr is name) or \
        (isinstance(parent, cst.Arg) and parent.keyword is name) or isinstance(parent, (cst.NameItem, cst.ImportAlias))


def _kind(name: cst.Name, parents: list) -> Optional[bool]:
    """True for a write, False for a read, None for a use that touches no value (metadata, a
    rebinding, a reference stored away)."""
    parent = parents[-1]
    grandparent = parents[-2] if len(parents) > 1 else None
    if isinstance(parent, cst.Attribute) and parent.value is name:
        attribute = parent.attr.value
        if isinstance(grandparent, cst.Call) and grandparent.func is parent:
            if attribute in _METADATA_METHODS:
                return None
            return attribute.endswith("_") and not attribute.startswith("_")
        return None if attribute in _METADATA_ATTRIBUTES else False
    if isinstance(parent, cst.AugAssign) and parent.target is name:
        return True
    if isinstance(parent, cst.Subscript) and parent.value is name:
        return True if _is_target(parent, grandparent) else False
    if _is_target(name, parent) or isinstance(parent, (cst.Del, cst.Return, cst.CompFor)):
        return None
    if isinstance(parent, cst.ComparisonTarget) and isinstance(parent.operator, (cst.Is, cst.IsNot)):
        return None
    return _through_containers(name, parents)


def _is_target(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    return (isinstance(parent, cst.AssignTarget) and parent.target is node) or \
        (isinstance(parent, (cst.AnnAssign, cst.AugAssign, cst.For)) and parent.target is node)


def _through_containers(name: cst.Name, parents: list) -> Optional[bool]:
    """A read, unless the value (alone or in a list, tuple or dict literal) is only stored:
    assigned, returned, or appended to a container, or given to a metadata function (`len(t)`)."""
    value: cst.CSTNode = name
    for parent in reversed(parents):
        if isinstance(parent, (cst.Element, cst.DictElement, cst.List, cst.Tuple, cst.Set, cst.Dict)):
            value = parent
            continue
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return)) and parent.value is value:
            return None
        if isinstance(parent, cst.Arg):
            value = parent
            continue
        if isinstance(parent, cst.Call) and isinstance(value, cst.Arg):
            called = last_name(parent.func)
            if called in _METADATA_FUNCTIONS or (isinstance(parent.func, cst.Attribute)
                                                 and called in _STORING_METHODS):
                return None
        return False
    return False


def _rebound(unit: cst.CSTNode) -> Iterator[str]:
    """Names the statement binds anew (`t = ...`, `for t in ...`, `del t`): no longer the tensor."""
    for node in _nodes(unit):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.For)) and isinstance(node.target, cst.Name):
            yield node.target.value
        elif isinstance(node, cst.Del) and isinstance(node.target, cst.Name):
            yield node.target.value


def _wait_line(analysis: ModuleAnalysis, start: _Start, later) -> Optional[int]:
    """The line of `handle.wait()` later in the same block, if any."""
    if start.handle is None:
        return None
    for unit, _, _ in later:
        for node in _nodes(unit):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value == "wait" and isinstance(node.func.value, cst.Name) \
                    and node.func.value.value == start.handle:
                return analysis.position(node).start.line
    return None


def _message(analysis: ModuleAnalysis, start: _Start, access: _Access, wait_line: Optional[int]) -> str:
    name = access.name.value
    where = analysis.position(access.name).start.line
    started = analysis.position(start.call).start.line
    how = "" if start.short_name in _ALWAYS_ASYNC else " with async_op=True"
    if start.handle is None:
        waited = "its Work handle is discarded, so nothing waits for it"
    elif wait_line is None:
        waited = f"'{start.handle}' is not waited on before it"
    else:
        waited = f"{start.handle}.wait() at line {wait_line}"
    head = (f"'{name}' is {'written' if access.write else 'read'} (line {where}) before the "
            f"{start.short_name}() started at line {started}{how} has finished ({waited})")
    if access.write:
        return f"{head}: the write races the transfer, so what the ranks end up with depends on timing"
    seen = "this rank's own partial values" if start.short_name in _REDUCTIONS else "the buffer's old contents"
    return f"{head}: the read sees {seen}, and the ranks go on with different ones"


def _remedy(start: _Start, access: _Access) -> str:
    if start.handle is None:
        return f"Keep the Work handle and call its wait() before using '{access.name.value}'"
    return f"Call {start.handle}.wait() before using '{access.name.value}'"


def _fix(analysis: ModuleAnalysis, start: _Start, access: _Access) -> Optional[Fix]:
    if start.handle is None or access.line is start.line:
        return None
    return Fix(SAFE, f"Call {start.handle}.wait() first",
               (insert_before_statement(analysis, access.line, f"{start.handle}.wait()"),))

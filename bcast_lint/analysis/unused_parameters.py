"""Submodules a DistributedDataParallel model runs on some steps only.

DDP built without `find_unused_parameters=True` expects a gradient for every parameter in every
backward: its reducer all-reduces a bucket once all of the bucket's gradients are ready. Where
`forward` calls a submodule only under a test on the step's data (`if has_box.any(): loss = loss +
self.refine(h[has_box])`), a step that skips it leaves the submodule's buckets unreduced: the
process's next forward fails with "Expected to have finished reduction in the prior iteration",
and a process that did run it waits in the all-reduce for the others (mmdetection3d#488, measured
in the blind corpora: one rank's RuntimeError, the other's "Connection closed by peer").

Only classes this module defines and wraps itself are read (`DDP(TwoStage())`, or `model =
TwoStage()` then `DDP(model)`): their `forward` and what `__init__` assigns are at hand.

Gradient hooks registered on every parameter of such a model (`for p in model.parameters():
p.register_hook(sync)`, Horovod's way) run once per parameter that gets a gradient: a collective
in one runs fewer times on a process whose step skips a submodule, in `forward` or in the training
code (`if depth is not None: loss = loss + mse(model.depth_head(h), depth)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis.expressions import argument_value, is_none, is_self_attribute, last_name
from bcast_lint.analysis.ranks import boolean_leaves
from bcast_lint.analysis.walk import ends_in, every_node, names_read, path_to

DDP = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})
# Tests on the shape of the call, not on the data: the same at every step where callers are consistent.
_SHAPE_TESTS = frozenset({"isinstance", "hasattr", "callable"})


@dataclass(frozen=True)
class SkippedSubmodule:
    call: cst.Call  # `self.refine(...)` in `forward`
    test: cst.BaseExpression  # the test on the step's data it runs under
    klass: cst.ClassDef  # the wrapped class
    wrapping: cst.Call  # `DDP(TwoStage())`, or the Lightning `Trainer(strategy="ddp")` that wraps it
    method: str = "forward"  # where the call is: `forward`, `training_step` or a method they call
    skipped_by: Optional[cst.BaseExpression] = None  # the test of an `if ...: continue` before the call


def skipped_submodules(analysis) -> Iterator[SkippedSubmodule]:
    """Each submodule call of a wrapped class's `forward` (a LightningModule's `training_step`)
    that runs under a test on its inputs."""
    for wrapping, klass, entry in _wrapped_classes(analysis):
        for skipped in _skipped_in_forward(klass, _submodules(analysis, klass), entry):
            yield SkippedSubmodule(skipped.call, skipped.test, klass, wrapping, skipped.method, skipped.skipped_by)


@dataclass(frozen=True)
class _Skipped:
    call: cst.Call
    test: cst.BaseExpression
    method: str
    skipped_by: Optional[cst.BaseExpression]


def _skipped_in_forward(klass: cst.ClassDef, submodules: frozenset[str], entry: str = "forward") -> Iterator[_Skipped]:
    """Once per submodule, the submodules that the class's `entry` method, or a method of the
    class it calls (`self.moe(h, ids)`), runs only under a test on its inputs."""
    forward = _method(klass, entry)
    if forward is None or not submodules:
        return
    methods = [forward] + [method for method in map(lambda name: _method(klass, name), _self_calls(forward))
                           if method is not None and method is not forward]
    tests: dict = {}
    for method in methods:
        inputs = _derived(method, {param.name.value for param in method.params.params[1:]})
        for call in every_node(method.body, cst.Call):
            name = _submodule_called(call, method)
            if name in submodules:
                tests[call] = (name, method.name.value, *_data_test(method, call, inputs))
    always = {name for name, _, test, _ in tests.values() if test is None}
    seen = set()
    for call, (name, method, test, skipped_by) in tests.items():
        if test is not None and name not in always and name not in seen:
            seen.add(name)
            yield _Skipped(call, test, method, skipped_by)


def _self_calls(method: cst.FunctionDef) -> list[str]:
    """The names of the methods `method` calls on its own object (`self.moe(...)`)."""
    return [call.func.attr.value for call in every_node(method.body, cst.Call) if is_self_attribute(call.func)]


def _derived(method: cst.FunctionDef, inputs: set[str]) -> set[str]:
    """`inputs` and the local names assigned from them (`route = ids % E`, `sel = route == e`)."""
    derived = set(inputs)
    for assign in every_node(method.body, cst.Assign):
        if names_read(assign.value) & derived:
            derived |= {name.value for target in assign.targets for name in every_node(target.target, cst.Name)}
    return derived


@dataclass(frozen=True)
class OutputUsedSometimes:
    name: str  # `s_feat` of `logits, s_feat = student(x)`
    submodule: str  # `proj`, whose call `forward` returns in that place
    test: cst.BaseExpression  # the test on the step's data every use of it is under
    backward: cst.Call  # `loss.backward()` after it
    klass: cst.ClassDef
    wrapping: cst.Call


def outputs_used_sometimes(analysis) -> Iterator[OutputUsedSometimes]:
    """An item of what a DDP-wrapped module's `forward` returns, the output of a submodule that
    nothing else returned uses, that the code after the forward puts into the loss only under a
    test on the step's data (`if alpha > 0: loss = loss + alpha * mse(s_feat, t_feat)`): in a step
    where it does not, that submodule's parameters get no gradient."""
    for wrapping, klass, entry in _wrapped_classes(analysis):
        returned = _returned_submodules(klass, _submodules(analysis, klass)) if entry == "forward" else {}
        for name in _bound_to(analysis, wrapping) if returned else ():
            for call in every_node(analysis.module, cst.Call):
                if isinstance(call.func, cst.Name) and call.func.value == name:
                    yield from _unpacked_and_tested(analysis, call, returned, klass, wrapping)


def _returned_submodules(klass: cst.ClassDef, submodules: frozenset[str]) -> dict[int, str]:
    """Position in `forward`'s returned tuple -> the submodule whose call alone that item is
    (`return self.head(h), self.proj(h)`), where no other item calls it."""
    forward = _method(klass, "forward")
    returns = [r.value for r in every_node(forward.body, cst.Return) if isinstance(r.value, cst.Tuple)] if forward else []
    if len(returns) != 1:
        return {}
    items = [element.value for element in returns[0].elements]
    found = {}
    for at, item in enumerate(items):
        name = _submodule_called(item) if isinstance(item, cst.Call) else None
        others = [_submodule_called(c) for i, other in enumerate(items) if i != at for c in every_node(other, cst.Call)]
        if name in submodules and name not in others:
            found[at] = name
    return found


def _bound_to(analysis, wrapping: cst.Call) -> list[str]:
    """The names the module assigns the DDP construction to (`student = DDP(Student())`)."""
    return [target.target.value for assign in every_node(analysis.module, cst.Assign) if assign.value is wrapping
            for target in assign.targets if isinstance(target.target, cst.Name)]


def _unpacked_and_tested(analysis, call: cst.Call, returned: dict, klass, wrapping) -> Iterator[OutputUsedSometimes]:
    path = path_to(analysis.module, call) or ()
    assign = next((node for node in reversed(path) if isinstance(node, cst.Assign)), None)
    scope = next((node for node in reversed(path) if isinstance(node, cst.FunctionDef)), analysis.module)
    target = assign.targets[0].target if assign is not None and len(assign.targets) == 1 else None
    if not isinstance(target, cst.Tuple) or assign.value is not call:
        return
    tests = analysis.divergence_in(scope).tests
    backward = next((c for c in every_node(scope, cst.Call) if isinstance(c.func, cst.Attribute)
                     and c.func.attr.value == "backward"), None)
    for at, submodule in returned.items():
        element = target.elements[at].value if at < len(target.elements) else None
        if not isinstance(element, cst.Name) or backward is None:
            continue
        test = _only_used_under(scope, element, tests)
        if test is not None:
            yield OutputUsedSometimes(element.value, submodule, test, backward, klass, wrapping)


def _only_used_under(scope: cst.CSTNode, bound: cst.Name, tests: dict) -> Optional[cst.BaseExpression]:
    """The test that differs between ranks which every read of `bound` in `scope` is under, or None."""
    reads = [name for name in every_node(scope, cst.Name) if name.value == bound.value and name is not bound]
    found = []
    for read in reads:
        path = path_to(scope, read) or ()
        test = next((node.test for node in reversed(path) if isinstance(node, cst.If)
                     and any(leaf in tests for leaf in boolean_leaves(node.test))), None)
        if test is None:
            return None
        found.append(test)
    return found[0] if found else None


# Registrations of a hook on one parameter's gradient: autograd runs it where that parameter gets one.
_GRADIENT_HOOKS = frozenset({"register_hook", "register_post_accumulate_grad_hook"})


@dataclass(frozen=True)
class HookedSubmodule:
    registration: cst.Call  # `p.register_hook(sync)` in `for p in model.parameters():`
    hook: cst.FunctionDef  # `sync`, which runs a collective
    call: cst.Call  # the submodule's call that runs on some steps only
    test: cst.BaseExpression  # the test on the step's data it runs under


def hooked_submodules(analysis) -> Iterator[HookedSubmodule]:
    """Each gradient hook with a collective, registered on every parameter of a model of one of
    this module's classes whose submodule runs under a test on the step's data."""
    if "register_" not in analysis.whole_text():
        return
    hooks = {site.scope.name.value: site.scope for site in analysis.calls if isinstance(site.scope, cst.FunctionDef)}
    for loop in every_node(analysis.module, cst.For) if hooks else ():
        owner = _parameters_of(loop.iter)
        klass = _class_made(analysis, owner) if owner is not None else None
        if klass is None:
            continue
        for registration in every_node(loop.body, cst.Call):
            hook = _registered_hook(registration, hooks)
            skipped = next(_skipped_calls(analysis, klass, owner.value), None) if hook is not None else None
            if skipped is not None:
                yield HookedSubmodule(registration, hook, *skipped)


def _parameters_of(iterable: cst.BaseExpression) -> Optional[cst.Name]:
    """`model` of `model.parameters()`."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value == "parameters" and isinstance(iterable.func.value, cst.Name):
        return iterable.func.value
    return None


def _registered_hook(call: cst.Call, hooks: dict) -> Optional[cst.FunctionDef]:
    """The function with a collective that `p.register_hook(fn)` registers, or None."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in _GRADIENT_HOOKS and call.args):
        return None
    hooked = call.args[0].value
    return hooks.get(hooked.value) if isinstance(hooked, cst.Name) else None


def _skipped_calls(analysis, klass: cst.ClassDef, owner: str) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    """(call, test) for the class's submodules that `forward` runs under a test on its inputs,
    or that the module's code runs through `owner` (`model.depth_head(h)`) under a test whose
    outcome differs between ranks (analysis.divergence)."""
    submodules = _submodules(analysis, klass)
    yield from ((skipped.call, skipped.test) for skipped in _skipped_in_forward(klass, submodules))
    for call in every_node(analysis.module, cst.Call) if submodules else ():
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == owner
                and func.attr.value in submodules):
            continue
        path = path_to(analysis.module, call) or ()
        scope = next((node for node in reversed(path) if isinstance(node, cst.FunctionDef)), None)
        test = next((node.test for node in reversed(path) if isinstance(node, cst.If)), None)
        if scope is not None and test is not None \
                and any(leaf in analysis.divergence_in(scope).tests for leaf in boolean_leaves(test)):
            yield call, test


def _wrapped_classes(analysis) -> Iterator[tuple[cst.Call, cst.ClassDef, str]]:
    """(the DDP construction, the module's class it wraps, the method its forward runs) where it
    does not set `find_unused_parameters` to anything but False; and LightningModules that a
    Trainer of a DDP strategy fits (`training_step`: lightning 2.6.6, overrides/distributed.py:61,
    the wrapper's forward calls it)."""
    yield from _fitted_under_ddp(analysis)
    if "DistributedDataParallel" not in analysis.whole_text():
        return
    for call in every_node(analysis.module, cst.Call):
        if not analysis.qualified_names(call.func) & DDP:
            continue
        unused = argument_value(call, None, "find_unused_parameters")
        if unused is not None and not (isinstance(unused, cst.Name) and unused.value == "False"):
            continue
        wrapped = argument_value(call, 0, "module")
        klass = _class_made(analysis, wrapped)
        if klass is not None:
            yield call, klass, "forward"


# Strategies that wrap the LightningModule in DistributedDataParallel as it is built by default.
_DDP_STRATEGIES = frozenset({"ddp", "ddp_spawn", "ddp_fork", "ddp_notebook"})


def _fitted_under_ddp(analysis) -> Iterator[tuple[cst.Call, cst.ClassDef, str]]:
    """(the Trainer, the module's LightningModule class it fits, "training_step") for a Trainer
    built with a DDP strategy (`strategy="ddp"`, `DDPStrategy()`) without find_unused_parameters=True."""
    if "strategy" not in analysis.whole_text() or ".fit(" not in analysis.whole_text():
        return
    trainers = [call for call in every_node(analysis.module, cst.Call) if _ddp_trainer(analysis, call)]
    for call in every_node(analysis.module, cst.Call) if trainers else ():
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "fit" and call.args:
            klass = _class_made(analysis, call.args[0].value)
            if klass is not None and analysis.derives_from(klass, ("lightning", "pytorch_lightning"), ("LightningModule",)):
                yield trainers[0], klass, "training_step"


def _ddp_trainer(analysis, call: cst.Call) -> bool:
    if not any(name.split(".")[0] in ("lightning", "pytorch_lightning") and name.endswith(".Trainer")
               for name in analysis.qualified_names(call.func)):
        return False
    strategy = argument_value(call, None, "strategy")
    if isinstance(strategy, cst.SimpleString):
        return strategy.evaluated_value in _DDP_STRATEGIES
    if isinstance(strategy, cst.Call) and last_name(strategy.func) == "DDPStrategy":
        unused = argument_value(strategy, None, "find_unused_parameters")
        return unused is None or (isinstance(unused, cst.Name) and unused.value == "False")
    return False


def _class_made(analysis, wrapped: Optional[cst.BaseExpression]) -> Optional[cst.ClassDef]:
    """The module's class `TwoStage` for `TwoStage()`, or for a name every assignment of the module
    binds to `TwoStage(...)`."""
    if isinstance(wrapped, cst.Call) and isinstance(wrapped.func, cst.Name):
        return analysis.module_class(wrapped.func.value)
    if not isinstance(wrapped, cst.Name):
        return None
    made = {value.func.value for value in analysis.assigned_values(wrapped.value)
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name)}
    return analysis.module_class(made.pop()) if len(made) == 1 else None


def _method(klass: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    return next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def _submodules(analysis, klass: cst.ClassDef) -> frozenset[str]:
    """The attributes `__init__` sets to a layer (`self.refine = nn.Linear(8, 4)`) or to an object
    of another of the module's classes: they hold parameters."""
    init = _method(klass, "__init__")
    if init is None:
        return frozenset()
    found = set()
    for assign in every_node(init.body, cst.Assign):
        for target, value in _pairs(assign):
            if is_self_attribute(target) and isinstance(value, cst.Call) and _holds_parameters(analysis, value, init):
                found.add(target.attr.value)
    return frozenset(found)


def _pairs(assign: cst.Assign) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) of `a = b` and of each item of `a, b = c, d`."""
    for target in assign.targets:
        if isinstance(target.target, cst.Tuple) and isinstance(assign.value, cst.Tuple) \
                and len(target.target.elements) == len(assign.value.elements):
            yield from ((t.value, v.value) for t, v in zip(target.target.elements, assign.value.elements))
        else:
            yield target.target, assign.value


def _holds_parameters(analysis, made: cst.Call, init: cst.FunctionDef) -> bool:
    """`nn.Linear(8, 4)` (a torch.nn class) or an object of another of the module's classes."""
    return any(name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper()
               for name in analysis.qualified_names(made.func, init)) \
        or (isinstance(made.func, cst.Name) and analysis.module_class(made.func.value) is not None)


def _submodule_called(call: cst.Call, method: Optional[cst.FunctionDef] = None) -> Optional[str]:
    """`refine` for `self.refine(h)`; `experts` for `expert(h)` in `for e, expert in
    enumerate(self.experts):` of `method`."""
    if is_self_attribute(call.func):
        return call.func.attr.value
    if method is None or not isinstance(call.func, cst.Name):
        return None
    for loop in every_node(method.body, cst.For):
        iterated = loop.iter.args[0].value if isinstance(loop.iter, cst.Call) and last_name(loop.iter.func) \
            == "enumerate" and loop.iter.args else loop.iter
        items = loop.target.elements[-1].value if isinstance(loop.target, cst.Tuple) and iterated is not loop.iter \
            else loop.target
        if is_self_attribute(iterated) and isinstance(items, cst.Name) and items.value == call.func.value:
            return iterated.attr.value
    return None


def _data_test(forward: cst.FunctionDef, call: cst.Call, inputs: set[str]) -> tuple:
    """(the test, the `continue`'s test or None): of the innermost `if` (or conditional
    expression) around `call` that reads the values of `forward`'s inputs (`has_box.any()`), not
    only whether one was passed; or of an `if ...: continue` before it in a loop around it
    (`if not sel.any(): continue`). (None, None) where it runs at every step."""
    path = path_to(forward.body, call) or ()
    for at, part in reversed(list(enumerate(path))):
        test = part.test if isinstance(part, (cst.If, cst.IfExp)) else None
        if test is not None and _on_data(test, inputs):
            return test, None
        if isinstance(part, (cst.For, cst.While)) and at + 2 < len(path):
            skip = _skipping_test(part, path[at + 2], inputs)
            if skip is not None:
                return skip, skip
    return None, None


def _on_data(test: cst.BaseExpression, inputs: set[str]) -> bool:
    return bool(names_read(test) & inputs) and not _shape_test(test)


def _skipping_test(loop, statement: cst.CSTNode, inputs: set[str]) -> Optional[cst.BaseExpression]:
    """The test of an `if test: continue` on the inputs that comes before `statement` in the loop's body."""
    for earlier in loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ():
        if earlier is statement:
            return None
        if isinstance(earlier, cst.If) and ends_in(earlier.body, cst.Continue) and _on_data(earlier.test, inputs):
            return earlier.test
    return None


def _shape_test(test: cst.BaseExpression) -> bool:
    """`labels is not None`, `isinstance(x, dict)`, `not self.training and mask is None`."""
    if isinstance(test, cst.UnaryOperation):
        return _shape_test(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _shape_test(test.left) and _shape_test(test.right)
    if isinstance(test, cst.Comparison):
        return all(isinstance(target.operator, (cst.Is, cst.IsNot)) and is_none(target.comparator)
                   for target in test.comparisons)
    if isinstance(test, cst.Call):
        return isinstance(test.func, cst.Name) and test.func.value in _SHAPE_TESTS
    return isinstance(test, (cst.Name, cst.Attribute))  # a flag handed in (`return_loss`)

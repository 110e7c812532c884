"""Reaching definitions inside one function, walked once per World.

For every collective call the walk records, per world in which the call is reached, which
definitions of each local name reach it. Rules then ask questions such as "is `x` None in some
world where the call runs?" without re-walking anything.

The walk is deliberately simple: branches whose condition is not decided by the rank are both
taken and merged, loop bodies run zero or more times (two passes reach a fixed point for the
facts we keep), and an exception may leave a `try` body anywhere.

An in-place write (`buf.copy_(x)`, `buf[:k] = x`, `buf += x`) does not rebind its name: it is
recorded on the definitions it modifies (Definition.writes), so rules that ask what tensor a name
holds still see its allocation, and rules that ask what the tensor contains see the writes.
A test `x is None` / `x is not None` narrows `x` in each arm: a `None` assignment does not reach
the arm where `x` is known not to be None.

Attributes (`self.weights`, `obj.x`) are followed like locals when the caller asks for them: their
names ("self.weights") are keys of the environment from the start (walk_scope's `entry`), and
rebinding `obj` itself forgets what was known of `obj.x`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

import dataclasses

import libcst as cst

from bcast_lint.analysis.divergence import is_data_reason, is_handed_placeholder, is_own_batch
from bcast_lint.analysis.expressions import attribute_key, is_exit_call, is_none, none_test
from bcast_lint.analysis.bindings import Bindings, parameter_names, target_names
from bcast_lint.analysis.ranks import RankConditions, World, boolean_leaves
from bcast_lint.analysis.walk import every_node

ASSIGNED = "assigned"  # `x = value`: the value is known
OTHER = "other"  # bound some other way (parameter, loop target, import, ...): value unknown
UNBOUND = "unbound"


@dataclass(frozen=True)
class Guard:
    """The innermost rank-dependent `if` an assignment ran under, and which arm it was in."""

    statement: cst.If
    test: cst.BaseExpression
    polarity: bool


@dataclass(frozen=True)
class Write:
    """An in-place write into the tensor a definition made."""

    node: cst.CSTNode  # the call (`buf.copy_(x)`), subscript target (`buf[:k]`) or `buf += x`
    statement: cst.CSTNode
    whole: bool  # overwrites every element: `copy_`, `fill_`, `zero_`, `normal_`, `buf[:] = x`
    guard: Optional[Guard] = None


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str  # ASSIGNED, OTHER or UNBOUND
    value: Optional[cst.BaseExpression] = None
    statement: Optional[cst.CSTNode] = None
    guard: Optional[Guard] = None
    writes: tuple[Write, ...] = ()  # in-place writes since, in order

    @property
    def overwritten(self) -> bool:
        """Some write replaced every element: what the allocation held no longer matters."""
        return any(write.whole for write in self.writes)


Env = Mapping[str, frozenset]  # name -> frozenset[Definition]


@dataclass
class _State:
    env: dict
    live: bool = True

    def bind(self, name: str, definition: Definition) -> "_State":
        return self.rebind(name, frozenset((definition,)))

    def rebind(self, name: str, definitions: frozenset) -> "_State":
        env = dict(self.env)
        env[name] = definitions
        return _State(env, self.live)


_DEAD = _State({}, live=False)


def merge_envs(envs: Iterable[Env]) -> dict:
    merged: dict = {}
    for env in envs:
        for name, definitions in env.items():
            merged[name] = merged.get(name, frozenset()) | definitions
    return merged


def _merge(*states: _State) -> _State:
    live = [state for state in states if state.live]
    if not live:
        return _DEAD
    if len(live) == 1:
        return live[0]
    return _State(merge_envs(state.env for state in live))


def _attribute_elements(target: cst.CSTNode) -> Iterator[cst.Attribute]:
    """The attributes a tuple or list target binds: `self.features` in `self.features, self.labels = ...`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _attribute_elements(element.value)
    elif isinstance(target, cst.Attribute):
        yield target


def _with_write(definitions: frozenset, write: Write) -> frozenset:
    """The definitions once `write` went into them. The rules ask which writes may have gone into
    a definition and whether one of them replaced every element, never how many or on which path,
    so variants of one definition that differ only in other writes become one, with the writes of
    all of them: else each `if c: out[k] = v` would double the variants, and each pass of a loop
    that writes in place would add one (both exponential in a long function)."""
    merged: dict = {}  # (the definition without writes, overwritten) -> writes, in first-met order
    for definition in definitions:
        writes = definition.writes if write in definition.writes else (*definition.writes, write)
        key = (dataclasses.replace(definition, writes=()), any(w.whole for w in writes))
        known = merged.get(key)
        merged[key] = writes if known is None else (*known, *(w for w in writes if w not in known))
    return frozenset(dataclasses.replace(plain, writes=writes) for (plain, _), writes in merged.items())


_EMPTY_MAKERS = frozenset({"list", "tuple", "dict", "set"})
# Calls that read a container handed to them and never fill it.
_READERS = frozenset({"len", "bool", "print", "sorted", "enumerate", "list", "tuple", "iter", "any", "all"})


def _changed_in_place(scope: cst.CSTNode) -> frozenset:
    """The names of `scope` that something may fill without rebinding them: a method called on
    them (`records.append(r)`), an item written (`records[k] = v`), `+=`, a walrus, or a call
    they are handed to (`load_into(records)`) other than one that only reads."""
    names = {node.value.value for node in every_node(scope, cst.Attribute) if isinstance(node.value, cst.Name)}
    names |= {node.value.value for node in every_node(scope, cst.Subscript) if isinstance(node.value, cst.Name)}
    names |= {node.target.value for node in every_node(scope, cst.AugAssign) if isinstance(node.target, cst.Name)}
    names |= {node.target.value for node in every_node(scope, cst.NamedExpr) if isinstance(node.target, cst.Name)}
    for call in every_node(scope, cst.Call):
        if not (isinstance(call.func, cst.Name) and call.func.value in _READERS):
            names |= {arg.value.value for arg in call.args if isinstance(arg.value, cst.Name)}
    return frozenset(names)


def _is_empty_literal(value: Optional[cst.BaseExpression]) -> bool:
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return not value.elements
    return isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Name) \
        and value.func.value in _EMPTY_MAKERS


@dataclass
class _Loop:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


Observer = Callable[[cst.CSTNode, _State], None]


class _Walker:
    """Walks one scope's statements in one world, calling `observe(statement, env)` wherever a
    statement that owns a collective call is reached."""

    def __init__(self, conditions: RankConditions, world: World, observe: Callable, bindings: Bindings,
                 attributes: frozenset = frozenset(), scope: Optional[cst.CSTNode] = None):
        self._conditions = conditions
        self._scope = scope
        self._changed_in_place: Optional[frozenset] = None
        self._world = world
        self._observe = observe
        self.bindings = bindings
        self._guards: list[Guard] = []
        self._loops: list[_Loop] = []
        self._attributes = attributes  # the "obj.attr" keys followed, see walk_scope
        self.returns: list[_State] = []  # the states leaving the scope through `return`

    # -- blocks and statements -------------------------------------------------------------
    def block(self, statements: Sequence[cst.CSTNode], state: _State) -> _State:
        for statement in statements:
            if not state.live:
                break
            state = self.statement(statement, state)
        return state

    def statement(self, statement: cst.CSTNode, state: _State) -> _State:
        self._observe(statement, state.env)
        handler = getattr(self, "_" + type(statement).__name__, None)
        if handler is not None:
            return handler(statement, state)
        return self._bind_unknown(statement, state)

    def _SimpleStatementLine(self, line: cst.SimpleStatementLine, state: _State) -> _State:
        for small in line.body:
            if not state.live:
                break
            state = self._small_statement(small, line, state)
        return state

    _SimpleStatementSuite = _SimpleStatementLine  # `if c: x = 1` on one line

    def _small_statement(self, small, line, state: _State) -> _State:
        if isinstance(small, cst.Return):
            self.returns.append(self._bind_unknown(small, state))
            return _DEAD
        if isinstance(small, cst.Raise):
            return _DEAD
        if isinstance(small, cst.Assert) and self._fails_on_data(small.test):
            return _DEAD
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and is_exit_call(small.value):
            return _DEAD
        if isinstance(small, (cst.Break, cst.Continue)) and self._loops:
            exits = self._loops[-1]
            (exits.breaks if isinstance(small, cst.Break) else exits.continues).append(state)
            return _DEAD
        if isinstance(small, cst.Assign):
            return self._assign(small, line, state)
        if isinstance(small, cst.AnnAssign) and small.value is not None:
            return self._assign_value(small.target, small.value, line, state)
        if isinstance(small, cst.AugAssign):
            state = self._bind_unknown(small.value, state)
            return self._write(written_name(small.target), small, line, False, state)
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            name, whole = in_place_call(small.value)
            if name is not None:
                state = self._bind_unknown(small, state)
                return self._write(name, small.value, line, whole, state)
        if isinstance(small, cst.Del):
            return self._delete(small, state)
        return self._bind_unknown(small, state)

    def _fails_on_data(self, test: cst.BaseExpression) -> bool:
        """An `assert` that fails in this world through data that differs between ranks (a
        world's `data`), not through the rank alone (those assert how ranks are laid out)."""
        return self._world.data is not None and self._conditions.decide(test, self._world) is False \
            and self._conditions.evaluate(test, self._world) is None

    def _assign(self, assign: cst.Assign, line, state: _State) -> _State:
        state = self._bind_unknown(assign.value, state)  # walrus inside the value
        for target in assign.targets:
            state = self._assign_value(target.target, assign.value, line, state)
        return state

    def _assign_value(self, target, value, line, state: _State) -> _State:
        if isinstance(target, cst.Subscript):  # `buf[:k] = x` writes into `buf`
            state = self._bind_unknown(target, state)
            return self._write(written_name(target), target, line, _is_whole_slice(target), state)
        key = attribute_key(target) if isinstance(target, cst.Attribute) else None
        if key is None and not isinstance(target, cst.Name):
            return self._bind_target(target, state)
        name = key or target.value
        if name not in state.env:
            return state  # not a local of this scope, nor an attribute followed
        guard = self._guards[-1] if self._guards else None
        return self._forget_attributes(name, state).bind(name, Definition(name, ASSIGNED, value, line, guard))

    def _forget_attributes(self, name: str, state: _State) -> _State:
        """`obj = ...` makes what was known of `obj.x` unknown."""
        for key in self._attributes:
            if key.startswith(name + ".") and key in state.env:
                state = state.bind(key, Definition(key, OTHER, statement=None))
        return state

    def _write(self, name: Optional[str], node, line, whole: bool, state: _State) -> _State:
        if name is None or name not in state.env:
            return state
        write = Write(node, line, whole, self._guards[-1] if self._guards else None)
        return state.rebind(name, _with_write(state.env[name], write))

    def _delete(self, delete: cst.Del, state: _State) -> _State:
        for name in self.bindings.bound_names(delete):
            if name in state.env:
                state = state.bind(name, Definition(name, UNBOUND))
        return state

    def _bind_target(self, target: cst.CSTNode, state: _State) -> _State:
        """`a, b = ...`, `self.a, self.b = ...`, `for i, x in ...`, `except E as e`: bound (under
        the innermost test around them), values unknown."""
        state = self._bind_unknown(target, state)  # a walrus inside a subscript, say
        guard = self._guards[-1] if self._guards else None
        keys = [*target_names(target), *filter(None, map(attribute_key, _attribute_elements(target)))]
        for name in keys:
            if name in state.env:
                state = state.bind(name, Definition(name, OTHER, statement=target, guard=guard))
        return state

    def _bind_unknown(self, node: cst.CSTNode, state: _State) -> _State:
        for name in self.bindings.bound_names(node):
            if name in state.env:
                state = state.bind(name, Definition(name, OTHER, statement=node))
        return state

    # -- compound statements -------------------------------------------------------------
    def _If(self, statement: cst.If, state: _State) -> _State:
        state = self._bind_unknown(statement.test, state)
        decided = self._decide(statement.test, state)
        if decided is None:
            return _merge(self._arm(statement.body, self._narrow(statement.test, True, state), None),
                          self._orelse(statement.orelse, self._narrow(statement.test, False, state), None))
        narrowed = self._narrow(statement.test, decided, state)
        if narrowed is _DEAD:  # the data decided `x is None` where x cannot be None
            decided = not decided
            narrowed = self._narrow(statement.test, decided, state)
        guard = Guard(statement, statement.test, decided)
        if decided:
            return self._arm(statement.body, narrowed, guard)
        return self._orelse(statement.orelse, narrowed, guard)

    def _decide(self, test: cst.BaseExpression, state: _State) -> Optional[bool]:
        """The test's value in this world, when the rank (or the world's data) decides it; a
        name assigned one value before the test stands for it (`is_main = rank == 0`). A test
        of `x is None` is left to narrowing, which knows where `x` is None."""
        name, _ = none_test(test)
        if name is not None and name in state.env:
            decided = self._conditions.evaluate(test, self._world)
            reason = self._conditions.varying.get(test)
            if decided is None and self._world.data is not None and (
                    is_handed_placeholder(reason) or (is_data_reason(reason) and not is_own_batch(reason))):
                # `if latest is None:` on what a rank was handed, not set; `if loss is None:` after
                # a step that returns None on the rank whose work failed
                return self._world.data
            return decided
        return self._conditions.decide(test, self._world, _aliases(test, state))

    def _narrow(self, test: cst.BaseExpression, truth: bool, state: _State) -> _State:
        """The state in the arm where `test` has the value `truth`: where `x is not None` holds,
        the assignments of None to `x` do not reach (and if only those did, the arm is never
        entered)."""
        name, none_when = none_test(test)
        if name is None or name not in state.env or not state.live or truth == none_when:
            return state
        kept = frozenset(d for d in state.env[name] if not self._is_none(d))
        return state.rebind(name, kept) if kept else _DEAD

    def _is_none(self, definition: Definition) -> bool:
        return definition.kind == ASSIGNED and all(
            is_none(v) or self._conditions.returns_none(v, self._world) for v in self._choices(definition.value))

    def _choices(self, expr: cst.BaseExpression):
        """The values `a if <test> else b` may take in this world."""
        if not isinstance(expr, cst.IfExp):
            return (expr,)
        decided = self._conditions.evaluate(expr.test, self._world)
        body = self._choices(expr.body) if decided is not False else ()
        return (*body, *(self._choices(expr.orelse) if decided is not True else ()))

    def _arm(self, body: cst.BaseSuite, state: _State, guard: Optional[Guard]) -> _State:
        if guard is not None:
            self._guards.append(guard)
        try:
            return self.block(_statements(body), state)
        finally:
            if guard is not None:
                self._guards.pop()

    def _orelse(self, orelse, state: _State, guard: Optional[Guard]) -> _State:
        if orelse is None:
            return state
        if isinstance(orelse, cst.If):  # elif: its own test is evaluated too
            if guard is not None:
                self._guards.append(guard)
            try:
                return self.statement(orelse, state)
            finally:
                if guard is not None:
                    self._guards.pop()
        return self._arm(orelse.body, state, guard)

    def _For(self, statement: cst.For, state: _State) -> _State:
        if self._surely_empty(statement.iter, state):  # `records = []`, filled on the main process only
            return self._orelse(statement.orelse, state, None)
        return self._loop(statement, state, lambda s: self._bind_target(statement.target, s))

    def _surely_empty(self, iterable: cst.BaseExpression, state: _State) -> bool:
        """Whether every definition of the iterated name reaching here in this world is an empty
        literal (`[]`, `{}`, `()`, `list()`) that nothing in the scope fills in place: the
        loop's body runs zero times."""
        definitions = state.env.get(iterable.value) if isinstance(iterable, cst.Name) else None
        if not definitions or not all(d.kind == ASSIGNED and _is_empty_literal(d.value) for d in definitions):
            return False
        if self._changed_in_place is None:
            self._changed_in_place = _changed_in_place(self._scope) if self._scope is not None else None
        return self._changed_in_place is not None and iterable.value not in self._changed_in_place

    def _While(self, statement: cst.While, state: _State) -> _State:
        return self._loop(statement, state, lambda s: self._bind_unknown(statement.test, s))

    def _loop(self, statement, entry: _State, enter: Callable[[_State], _State]) -> _State:
        exits = _Loop()
        self._loops.append(exits)
        body_end = _DEAD
        for _ in range(2):  # a second pass lets definitions from the body reach its start
            start = enter(_merge(entry, body_end, *exits.continues))
            body_end = self.block(_statements(statement.body), start)
        self._loops.pop()
        finished = _merge(entry, body_end, *exits.continues)
        if statement.orelse is not None:
            finished = self.block(_statements(statement.orelse.body), finished)
        return _merge(finished, *exits.breaks)

    def _With(self, statement: cst.With, state: _State) -> _State:
        for item in statement.items:
            state = self._bind_unknown(item, state)
        return self.block(_statements(statement.body), state)

    def _Try(self, statement, state: _State) -> _State:
        body_end = self.block(_statements(statement.body), state)
        raised = _merge(state, body_end)  # an exception can leave the body anywhere
        outcomes = []
        # Where work that differs between ranks fails on some ranks only, the others never
        # enter a handler (analysis.divergence).
        fails_here = self._world.data is not False or statement not in self._conditions.varying
        handlers = statement.handlers if fails_here else ()
        for handler in handlers:
            entered = raised
            if handler.name is not None:
                entered = self._bind_target(handler.name.name, raised)
            outcomes.append(self.block(_statements(handler.body), entered))
        if statement.orelse is not None:
            body_end = self.block(_statements(statement.orelse.body), body_end)
        finished = _merge(body_end, *outcomes)
        if statement.finalbody is not None:
            finished = self.block(_statements(statement.finalbody.body), finished)
        return finished

    _TryStar = _Try

    def _Match(self, statement: cst.Match, state: _State) -> _State:
        outcomes = [state]  # no case may match
        for case in statement.cases:
            entered = self._bind_unknown(case.pattern, state)
            outcomes.append(self.block(_statements(case.body), entered))
        return _merge(*outcomes)

    def _FunctionDef(self, statement: cst.FunctionDef, state: _State) -> _State:
        return self._bind_unknown(statement, state)

    _ClassDef = _FunctionDef


# Tensor methods that write every element whatever the tensor held before.
_WHOLE_WRITES = frozenset({"copy_", "fill_", "zero_", "normal_", "uniform_", "random_", "bernoulli_",
                           "exponential_", "geometric_", "cauchy_", "log_normal_"})
# Methods with a trailing underscore that change no element.
_NOT_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "resize_", "set_"})


def in_place_call(call: cst.Call) -> tuple[Optional[str], bool]:
    """(`buf`, whole) for `buf.copy_(x)`, `buf.data.fill_(0)`, `buf[:k].zero_()`; (None, False)
    for any other call."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None, False
    method = func.attr.value
    if not method.endswith("_") or method.startswith("_") or method in _NOT_WRITES:
        return None, False
    receiver = func.value
    whole = method in _WHOLE_WRITES
    while isinstance(receiver, (cst.Attribute, cst.Subscript)):
        if isinstance(receiver, cst.Subscript):
            whole = whole and _is_whole_slice(receiver)
        elif receiver.attr.value != "data":
            return attribute_key(receiver), whole  # `self.buf.copy_(x)`; `a.b.c.copy_(x)`: None
        receiver = receiver.value
    return (receiver.value, whole) if isinstance(receiver, cst.Name) else (None, False)


def written_name(target: cst.BaseExpression) -> Optional[str]:
    """The local whose tensor `target` writes into: `buf` for `buf`, `buf[:k]`, `buf.data[0]`."""
    while isinstance(target, cst.Subscript) or (isinstance(target, cst.Attribute)
                                                and target.attr.value == "data"):
        target = target.value
    return target.value if isinstance(target, cst.Name) else attribute_key(target)


def _is_whole_slice(subscript: cst.Subscript) -> bool:
    """`buf[:]` or `buf[...]`."""
    if len(subscript.slice) != 1:
        return False
    index = subscript.slice[0].slice
    if isinstance(index, cst.Slice):
        return index.lower is None and index.upper is None and index.step is None
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis)


def _aliases(test: cst.BaseExpression, state: _State) -> dict:
    """The names among the test's operands that one assignment reaching here gave a value."""
    aliases = {}
    for leaf in boolean_leaves(test):
        definitions = state.env.get(leaf.value) if isinstance(leaf, cst.Name) else None
        if definitions and len(definitions) == 1:
            definition = next(iter(definitions))
            if definition.kind == ASSIGNED and definition.value is not None:
                aliases[leaf.value] = definition.value
    return aliases


def _statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.SimpleStatementSuite):
        return (body,)
    return body.body


def _initial_state(scope: cst.CSTNode, bindings: Bindings) -> _State:
    body = scope if isinstance(scope, cst.Module) else scope.body
    env = {name: frozenset((Definition(name, UNBOUND),)) for name in bindings.local_names(body)}
    if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        for param in parameter_names(scope.params):
            env[param] = frozenset((Definition(param, OTHER),))
    return _State(env)


def scope_statements(scope: cst.CSTNode) -> Sequence[cst.CSTNode]:
    return scope.body if isinstance(scope, cst.Module) else _statements(scope.body)


def walk_scope(scope: cst.CSTNode, worlds: Sequence[World], conditions: RankConditions,
               observe: Callable[[World, cst.CSTNode, Env], None], bindings: Bindings,
               entry: Optional[Callable[[World], Env]] = None) -> None:
    """Walk `scope` (a Module, FunctionDef or ClassDef) once per world. `entry(world)` gives the
    definitions of attributes to follow ("self.weights") when the scope starts."""
    initial = _initial_state(scope, bindings)
    statements = scope_statements(scope)
    for world in worlds:
        extra = entry(world) if entry is not None else {}
        walker = _Walker(conditions, world, lambda node, env, w=world: observe(w, node, env), bindings,
                         frozenset(extra), scope)
        walker.block(statements, _State({**initial.env, **extra}) if extra else initial)


def final_env(scope: cst.FunctionDef, world: World, conditions: RankConditions, bindings: Bindings,
              entry: Env) -> Env:
    """What `entry`'s keys hold when a call of `scope` ends in `world` (falling off its end or
    returning); `entry` itself when no path ends there."""
    initial = _initial_state(scope, bindings)
    walker = _Walker(conditions, world, lambda node, env: None, bindings, frozenset(entry), scope)
    end = walker.block(scope_statements(scope), _State({**initial.env, **entry}))
    finished = _merge(end, *walker.returns)
    if not finished.live:
        return entry
    return {key: finished.env[key] for key in entry}

"""Reaching definitions inside one function, walked once per World.

For every collective call the walk records, per world in which the call is reached, which
definitions of each local name reach it. Rules then ask questions such as "is `x` None in some
world where the call runs?" without re-walking anything.

The walk is deliberately simple: branches whose condition is not decided by the rank are both
taken and merged, loop bodies run zero or more times (two passes reach a fixed point for the
facts we keep), and an exception may leave a `try` body anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional, Sequence

import libcst as cst

from bcast_lint.analysis.bindings import bound_names, local_names, parameter_names, target_names
from bcast_lint.analysis.ranks import RankConditions, World

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
class Definition:
    name: str
    kind: str  # ASSIGNED, OTHER or UNBOUND
    value: Optional[cst.BaseExpression] = None
    statement: Optional[cst.CSTNode] = None
    guard: Optional[Guard] = None


Env = Mapping[str, frozenset]  # name -> frozenset[Definition]


@dataclass
class _State:
    env: dict
    live: bool = True

    def bind(self, name: str, definition: Definition) -> "_State":
        env = dict(self.env)
        env[name] = frozenset((definition,))
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


@dataclass
class _Loop:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


Observer = Callable[[cst.CSTNode, _State], None]


class _Walker:
    """Walks one scope's statements in one world, calling `observe(statement, env)` wherever a
    statement that owns a collective call is reached."""

    def __init__(self, conditions: RankConditions, world: World, observe: Callable):
        self._conditions = conditions
        self._world = world
        self._observe = observe
        self._guards: list[Guard] = []
        self._loops: list[_Loop] = []

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
        if isinstance(small, (cst.Return, cst.Raise)):
            return _DEAD
        if isinstance(small, (cst.Break, cst.Continue)) and self._loops:
            exits = self._loops[-1]
            (exits.breaks if isinstance(small, cst.Break) else exits.continues).append(state)
            return _DEAD
        if isinstance(small, cst.Assign):
            return self._assign(small, line, state)
        if isinstance(small, cst.AnnAssign) and small.value is not None:
            return self._assign_value(small.target, small.value, line, state)
        if isinstance(small, cst.Del):
            return self._delete(small, state)
        return self._bind_unknown(small, state)

    def _assign(self, assign: cst.Assign, line, state: _State) -> _State:
        state = self._bind_unknown(assign.value, state)  # walrus inside the value
        for target in assign.targets:
            state = self._assign_value(target.target, assign.value, line, state)
        return state

    def _assign_value(self, target, value, line, state: _State) -> _State:
        if not isinstance(target, cst.Name):
            return self._bind_target(target, state)
        if target.value not in state.env:
            return state  # not a local of this scope
        guard = self._guards[-1] if self._guards else None
        return state.bind(target.value, Definition(target.value, ASSIGNED, value, line, guard))

    def _delete(self, delete: cst.Del, state: _State) -> _State:
        for name in bound_names(delete):
            if name in state.env:
                state = state.bind(name, Definition(name, UNBOUND))
        return state

    def _bind_target(self, target: cst.CSTNode, state: _State) -> _State:
        """`a, b = ...`, `for i, x in ...`, `except E as e`: bound, values unknown."""
        state = self._bind_unknown(target, state)  # a walrus inside a subscript, say
        for name in target_names(target):
            if name in state.env:
                state = state.bind(name, Definition(name, OTHER, statement=target))
        return state

    def _bind_unknown(self, node: cst.CSTNode, state: _State) -> _State:
        for name in bound_names(node):
            if name in state.env:
                state = state.bind(name, Definition(name, OTHER, statement=node))
        return state

    # -- compound statements -------------------------------------------------------------
    def _If(self, statement: cst.If, state: _State) -> _State:
        state = self._bind_unknown(statement.test, state)
        decided = self._conditions.evaluate(statement.test, self._world)
        if decided is None:
            return _merge(self._arm(statement.body, state, None),
                          self._orelse(statement.orelse, state, None))
        guard = Guard(statement, statement.test, decided)
        if decided:
            return self._arm(statement.body, state, guard)
        return self._orelse(statement.orelse, state, guard)

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
        return self._loop(statement, state, lambda s: self._bind_target(statement.target, s))

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
        for handler in statement.handlers:
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


def _statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.SimpleStatementSuite):
        return (body,)
    return body.body


def _initial_state(scope: cst.CSTNode) -> _State:
    body = scope if isinstance(scope, cst.Module) else scope.body
    env = {name: frozenset((Definition(name, UNBOUND),)) for name in local_names(body)}
    if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        for param in parameter_names(scope.params):
            env[param] = frozenset((Definition(param, OTHER),))
    return _State(env)


def scope_statements(scope: cst.CSTNode) -> Sequence[cst.CSTNode]:
    return scope.body if isinstance(scope, cst.Module) else _statements(scope.body)


def walk_scope(scope: cst.CSTNode, worlds: Sequence[World], conditions: RankConditions,
               observe: Callable[[World, cst.CSTNode, Env], None]) -> None:
    """Walk `scope` (a Module, FunctionDef or ClassDef) once per world."""
    initial = _initial_state(scope)
    statements = scope_statements(scope)
    for world in worlds:
        walker = _Walker(conditions, world, lambda node, env, w=world: observe(w, node, env))
        walker.block(statements, initial)

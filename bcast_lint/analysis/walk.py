"""A read-only walk over LibCST trees, several times faster than `CSTNode.visit`.

`CSTNode.visit` rebuilds and re-validates every node it passes, so that a transformer can replace
it, and it descends into every comma, parenthesis and run of whitespace. The analysis never
changes a tree and never looks at punctuation, so this walk reads each node's children straight
from its dataclass fields, in source order, and skips the fields that hold only syntax tokens.

`Visitor` keeps `cst.CSTVisitor`'s protocol: `visit_<Class>(node)` returning False skips the
node's children, and `leave_<Class>(node)` runs after them.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import typing
from typing import Iterator, Optional

import libcst as cst
from libcst._maybe_sentinel import MaybeSentinel

# Classes whose nodes are punctuation or layout: nothing the analysis asks about lives under them.
_SYNTAX_TOKENS = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
    cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Semicolon, cst.Colon, cst.Dot,
    cst.AssignEqual, cst.ParamSlash, MaybeSentinel,
)

# The few classes whose dataclass fields are not declared in source order.
_SOURCE_ORDER = {
    cst.FunctionDef: ("decorators", "asynchronous", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.Arg: ("keyword", "value"),
    cst.For: ("asynchronous", "target", "iter", "body", "orelse"),
    cst.CompFor: ("asynchronous", "target", "iter", "ifs", "inner_for_in"),
    cst.With: ("asynchronous", "items", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
}

_fields_by_class: dict[type, tuple[str, ...]] = {}


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node's children in source order, without syntax tokens."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if type(value) in _SEQUENCES:
            yield from value
        elif _is_node(value):
            yield value


def path_to(root: cst.CSTNode, target: cst.CSTNode, *, skip_suites: bool = False) -> Optional[tuple]:
    """The nodes from `root` down to `target`'s parent, or None when `target` is not below `root`.
    `skip_suites`: do not look inside statement bodies (the target is in `root`'s header).

    Breadth first: the target is a few levels down (a statement in an arm's block, a call in a
    statement), and a depth-first search would first wander through whole sibling blocks."""
    queue = collections.deque([(root, ())])
    while queue:
        node, above = queue.popleft()
        path = (*above, node)
        for child in children(node):
            if child is target:
                return path
            if not (skip_suites and isinstance(child, cst.BaseSuite)):
                queue.append((child, path))
    return None


def _child_fields(node_class: type) -> tuple[str, ...]:
    fields = _fields_by_class.get(node_class)
    if fields is None:
        declared = [field.name for field in dataclasses.fields(node_class)
                    if _may_hold_content(field.type)]
        order = _SOURCE_ORDER.get(node_class, ())
        fields = tuple(sorted(declared, key=lambda name: order.index(name) if name in order else len(order)))
        _fields_by_class[node_class] = fields
    return fields


def _may_hold_content(annotation) -> bool:
    """Whether a field declared as `annotation` can hold a node that is not a syntax token. The
    items of a sequence field that passes are then all content nodes."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = getattr(cst, annotation.__forward_arg__, cst.CSTNode)
    if isinstance(annotation, type):
        return issubclass(annotation, cst.CSTNode) and not issubclass(annotation, _SYNTAX_TOKENS)
    return any(_may_hold_content(argument) for argument in typing.get_args(annotation))


_SEQUENCES = {list, tuple}
_node_classes: dict[type, bool] = {}


def _is_node(value) -> bool:
    """isinstance(value, cst.CSTNode), cached per class: CSTNode is an ABC, whose check is slow."""
    value_class = type(value)
    known = _node_classes.get(value_class)
    if known is None:
        known = _node_classes[value_class] = isinstance(value, cst.CSTNode)
    return known


class Visitor:
    """Base class for read-only visitors; see the module docstring."""

    _entries: dict[type, tuple]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Per class, so a visitor class made inside a function takes its cache with it.
        cls._entries = {}

    def walk(self, node: cst.CSTNode) -> None:
        node_class = type(node)
        entry = self._entries.get(node_class) or self._entry(node_class)
        visit, leave, fields = entry
        if visit is None or visit(self, node) is not False:
            # children(), inlined: a generator per node made the whole walk half as fast again.
            for name in fields:
                value = getattr(node, name)
                if type(value) in _SEQUENCES:
                    for item in value:
                        self.walk(item)
                elif _is_node(value):
                    self.walk(value)
        if leave is not None:
            leave(self, node)

    @classmethod
    def _entry(cls, node_class: type) -> tuple:
        name = node_class.__name__
        entry = (getattr(cls, "visit_" + name, None), getattr(cls, "leave_" + name, None),
                 _child_fields(node_class))
        cls._entries[node_class] = entry
        return entry


class ScopeVisitor(Visitor):
    """A visitor of one scope's own code: it does not enter the functions and classes nested in
    `scope` (with `scope` None, it enters them all). One that must not enter lambdas either
    adds `visit_Lambda = ScopeVisitor.enters`."""

    scope: Optional[cst.CSTNode] = None

    def enters(self, node: cst.CSTNode) -> bool:
        return self.scope is None or node is self.scope

    visit_FunctionDef = visit_ClassDef = enters


def yields_in(node: cst.CSTNode) -> bool:
    """Whether `node` yields in its own code (not in a function or lambda defined there)."""
    return holds_own(node, (cst.Yield,))


def holds_own(node: cst.CSTNode, kinds: tuple) -> bool:
    """Whether `node`'s own code holds a `yield` or `return` of `kinds` (`(cst.Return, cst.Yield)`),
    not counting the functions, classes and lambdas defined in it."""
    finder = _ExitPoints(node, kinds)
    finder.walk(node)
    return finder.found


class _ExitPoints(ScopeVisitor):
    visit_Lambda = ScopeVisitor.enters

    def __init__(self, scope: cst.CSTNode, kinds: tuple) -> None:
        self.scope = scope
        self._kinds = kinds
        self.found = False

    def _note(self, node: cst.CSTNode) -> None:
        self.found = self.found or isinstance(node, self._kinds)

    visit_Yield = visit_Return = _note


def is_bare_call(statement: cst.CSTNode, call: cst.CSTNode) -> bool:
    """`call` is a statement of its own (`fully_shard(model)`, `broadcast(x)`): its result is dropped."""
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Expr) and small.value is call for small in statement.body)


def ends_in(body: cst.BaseSuite, kind: type) -> bool:
    """The block's last statement is a small statement of `kind` (`cst.Raise`, `cst.Break`)."""
    last = body if isinstance(body, cst.SimpleStatementSuite) else body.body[-1]
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(last.body[-1], kind)


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """The calls in `node`, in source order, not those of functions, classes or lambdas defined
    inside it (they run elsewhere)."""
    finder = _CallFinder(node)
    finder.walk(node)
    return finder.found


class _CallFinder(ScopeVisitor):
    visit_Lambda = ScopeVisitor.enters

    def __init__(self, scope: cst.CSTNode) -> None:
        self.scope = scope
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


def every_call(node: cst.CSTNode) -> list[cst.Call]:
    """The calls in `node`, those of the functions and classes defined inside it included."""
    return every_node(node, cst.Call)


def every_node(node: cst.CSTNode, kind: type) -> list:
    """The nodes of class `kind` in `node` (`cst.For`, `cst.Call`), nested functions included."""
    finder = _collector(kind)()
    finder.walk(node)
    return finder.found


class _Collector(Visitor):
    def __init__(self) -> None:
        self.found: list = []

    def _keep(self, node: cst.CSTNode) -> None:
        self.found.append(node)


@functools.lru_cache(maxsize=None)
def _collector(kind: type) -> type:
    """A _Collector whose visit method is named for `kind` (Visitor dispatches by that name)."""
    return type(f"_Every{kind.__name__}", (_Collector,), {f"visit_{kind.__name__}": _Collector._keep})


def words_in(node: cst.CSTNode) -> set[str]:
    """Every identifier and string literal in `node`, as written: what a test on the code's
    text needs, without generating the text."""
    collector = _Words()
    collector.walk(node)
    return collector.words


class _Words(Visitor):
    def __init__(self) -> None:
        self.words: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.words.add(node.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.words.add(node.value)


def names_read(node: cst.CSTNode) -> set[str]:
    """The names `node` reads: `t` and `failed` in `torch.tensor(1 if failed else 0, dtype=t)`,
    not the attribute names or the keywords."""
    collector = _LoadedNames()
    collector.walk(node)
    return collector.names


class _LoadedNames(Visitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.walk(node.value)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        self.walk(node.value)
        return False

"""A read-only walk over LibCST trees, several times faster than `CSTNode.visit`.

`CSTNode.visit` rebuilds and re-validates every node it passes, so that a transformer can replace
it, and it descends into every comma, parenthesis and run of whitespace. The analysis never
changes a tree and never looks at punctuation, so this walk reads each node's children straight
from its dataclass fields, in source order, and skips the fields that hold only syntax tokens.

`Visitor` keeps `cst.CSTVisitor`'s protocol: `visit_<Class>(node)` returning False skips the
node's children, `leave_<Class>(node)` runs after them, and `on_visit` / `on_leave` can be
overridden around both.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Callable, Iterator, Optional

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
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


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
    """Whether a field declared as `annotation` can hold a node that is not a syntax token."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = getattr(cst, annotation.__forward_arg__, cst.CSTNode)
    if isinstance(annotation, type):
        return issubclass(annotation, cst.CSTNode) and not issubclass(annotation, _SYNTAX_TOKENS)
    return any(_may_hold_content(argument) for argument in typing.get_args(annotation))


class Visitor:
    """Base class for read-only visitors; see the module docstring."""

    _visit_handlers: dict[type, Optional[Callable]]
    _leave_handlers: dict[type, Optional[Callable]]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # Per class, so a visitor class made inside a function takes its cache with it.
        cls._visit_handlers, cls._leave_handlers = {}, {}

    def walk(self, node: cst.CSTNode) -> None:
        if self.on_visit(node) is not False:
            for child in children(node):
                self.walk(child)
        self.on_leave(node)

    def on_visit(self, node: cst.CSTNode) -> Optional[bool]:
        visit = _handler(self._visit_handlers, type(self), "visit_", type(node))
        return visit(self, node) if visit is not None else True

    def on_leave(self, node: cst.CSTNode) -> None:
        leave = _handler(self._leave_handlers, type(self), "leave_", type(node))
        if leave is not None:
            leave(self, node)


def _handler(cache: dict, visitor_class: type, prefix: str, node_class: type) -> Optional[Callable]:
    try:
        return cache[node_class]
    except KeyError:
        found = cache[node_class] = getattr(visitor_class, prefix + node_class.__name__, None)
        return found

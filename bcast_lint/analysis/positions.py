"""Where parsed nodes are in the text, as LibCST's PositionProvider places them, for the few
nodes the rules report or compare.

PositionProvider makes a CodeRange for every node of the module it is given and tracks the line
and column at every token; on a large file with findings that cost more than the rules. Here the
code generation records only where each node starts and ends in its list of tokens (LibCST calls
`before_codegen`/`after_codegen` around every node and `record_syntactic_position` around the part
that is the node's own syntax, libcst 1.8-1.9 `_nodes/internal.py`), and a node's line and column
are worked out when someone asks. tests/test_positions.py checks the two agree node for node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

NEWLINE = re.compile(r"\r\n?|\n")  # what ends a line for LibCST's positions, as for Source


class Spans:
    """Each node of one module's code generation: the indices of its first and past-its-last
    token, shifted by `lines_before` when the module is one statement taken out of a file."""

    def __init__(self, module: cst.Module, lines_before: int = 0) -> None:
        state = _SpanState(default_indent=module.default_indent, default_newline=module.default_newline)
        module._codegen(state)
        self.nodes = state.spans
        self._tokens = state.tokens
        self._lines_before = lines_before
        self._places: Optional[list[tuple[int, int]]] = None

    def range(self, node: cst.CSTNode) -> CodeRange:
        start, end = self.nodes[node]
        return CodeRange(self._position(start), self._position(end))

    def newlines(self) -> int:
        return self._token_places()[-1][0] - 1

    def _position(self, token_index: int) -> CodePosition:
        line, column = self._token_places()[token_index]
        return CodePosition(line + self._lines_before, column)

    def _token_places(self) -> list[tuple[int, int]]:
        if self._places is None:
            self._places = _token_places(self._tokens)
        return self._places


def node_code(node: cst.CSTNode, module: Optional[cst.Module] = None) -> str:
    """`node`'s text, as `module.code_for_node` writes it (with its indentation and newline; the
    defaults without a module) but without a context manager made for every node's syntax."""
    module = module or _DEFAULT_FORMAT
    state = _TextState(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)
    return "".join(state.tokens)


_DEFAULT_FORMAT = cst.Module([])


def _token_places(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """(line, column) before each token and after the last, counted as LibCST counts: a token's
    own line breaks move the line, and the text after its last break is the column."""
    places, line, column = [(1, 0)], 1, 0
    for token in tokens:
        segments = NEWLINE.split(token)
        if len(segments) == 1:
            column += len(token)
        else:
            line += len(segments) - 1
            column = len(segments[-1])
        places.append((line, column))
    return places


class _Unrecorded:
    """The syntax of a node whose place nobody records."""

    __slots__ = ()

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exception: object) -> bool:
        return False


_UNRECORDED = _Unrecorded()


@dataclass
class _TextState(CodegenState):
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> _Unrecorded:
        return _UNRECORDED


@dataclass
class _SpanState(CodegenState):
    spans: dict = field(default_factory=dict)  # node -> (first token, past its last token)
    _starts: list = field(default_factory=list)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.spans:  # its syntactic span, recorded inside, stands (as for LibCST)
            self.spans[node] = (start, len(self.tokens))

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)

    def pop_trailing_newline(self) -> None:
        """Keep the module's last newline: LibCST drops it after the positions are recorded,
        and the token indices recorded must still count it."""


class _Syntactic:
    """The span of a node's own syntax, or of the children LibCST names as its ends (a class-based
    context manager: LibCST's generator-based one cost more than the span it records)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _SpanState, node: cst.CSTNode, start_node: Optional[cst.CSTNode],
                 end_node: Optional[cst.CSTNode]) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exception: object) -> bool:
        spans = self.state.spans
        start = spans[self.start_node][0] if self.start_node is not None else self.start
        end = spans[self.end_node][1] if self.end_node is not None else len(self.state.tokens)
        spans[self.node] = (start, end)
        return False


def positions(module: cst.Module) -> dict[cst.CSTNode, CodeRange]:
    """Every node's place, as MetadataWrapper.resolve(PositionProvider) gives it (for tests)."""
    spans = Spans(module)
    return {node: spans.range(node) for node in spans.nodes}


class StatementPositions:
    """Nodes' places in the parsed text, found from the top-level statement that holds them
    alone: its spans, generated with the module's indentation and newline, shifted by the lines
    before it. Resolving the whole module cost more than the rules on a large file with findings."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._spans_of: dict[cst.CSTNode, Spans] = {}  # node -> the spans of its statement
        self._top_of: dict[cst.CSTNode, cst.CSTNode] = {}  # calls and statements around them
        self._order = {statement: index for index, statement in enumerate(module.body)}
        self._lines_before: list[int] = []  # before each statement of the body, counted so far
        self._text_state = _TextState(default_indent=module.default_indent, default_newline=module.default_newline)
        self._resolved: dict[cst.CSTNode, Spans] = {}
        self._search = None
        self._whole: Optional[Spans] = None

    def hint(self, candidates: Sequence) -> None:
        """The top-level statement around each candidate call and its statements: where most
        nodes asked about are."""
        for candidate in candidates:
            top = candidate.statements[0]
            self._top_of[candidate.call] = top
            for statement in candidate.statements:
                self._top_of[statement] = top

    def of(self, node: cst.CSTNode) -> CodeRange:
        if node not in self._spans_of:
            self._find(node)
        spans = self._spans_of.get(node)
        if spans is None:  # the module itself, or a comment of its header or footer
            if self._whole is None:
                self._whole = Spans(self._module)
            spans = self._whole
        return spans.range(node)

    def _find(self, node: cst.CSTNode) -> None:
        top = self._top_of.get(node)
        if top is not None and top not in self._resolved:
            self._resolve(top)
            if node in self._spans_of:
                return
        if self._search is None:  # the statements with calls first: reports point near them
            with_calls = dict.fromkeys(self._top_of.values())
            self._search = iter([*with_calls, *(s for s in self._module.body if s not in with_calls)])
        for statement in self._search:
            if statement not in self._resolved:
                self._resolve(statement)
                if node in self._spans_of:
                    return

    def _resolve(self, statement: cst.CSTNode) -> None:
        alone = self._module.with_changes(header=(), body=(statement,), footer=())
        spans = self._resolved[statement] = Spans(alone, self._lines_before_statement(statement))
        self._spans_of.update(dict.fromkeys(spans.nodes, spans))

    def _lines_before_statement(self, statement: cst.CSTNode) -> int:
        """Counted from the top as far as needed, from the spans of statements resolved on the
        way (the rules ask mostly in the file's order), else from their text."""
        if not self._lines_before:
            self._lines_before.append(sum(map(self._newlines_of, self._module.header)))
        index = self._order[statement]
        while len(self._lines_before) <= index:
            earlier = self._module.body[len(self._lines_before) - 1]
            resolved = self._resolved.get(earlier)
            breaks = resolved.newlines() if resolved is not None else self._newlines_of(earlier)
            self._lines_before.append(self._lines_before[-1] + breaks)
        return self._lines_before[index]

    def _newlines_of(self, part: cst.CSTNode) -> int:
        tokens = self._text_state.tokens
        tokens.clear()
        part._codegen(self._text_state)
        return len(NEWLINE.findall("".join(tokens)))

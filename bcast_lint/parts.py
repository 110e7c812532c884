"""Split a very large module into parts that are linted one after another (issue 22).

LibCST's tree of a module, with the analysis over it, takes about 100 bytes per character of
source: a generated file of 150,000 lines would hold gigabytes at once. A part is the module's
frame, the top-level statements that only bind names its functions read (imports, constants,
`RANK = int(os.environ["RANK"])`), with whole components of its other top-level statements: a
function or class, and every top-level statement that names it or that it names, followed to
the end (callers and callees, base classes, module-level code that calls them). No analysis of
one function reads another component, so each part's findings are the whole module's findings
in its lines. The frame is linted with every part; the engine keeps one copy of its findings.

Only a cut text over PART_LINES lines is split: every file of the seventeen real libraries in
docs/real-world.md stays whole. What an analysis reads of the module's tree beyond names (a
logging level set by a rank test, ModuleAnalysis._logging_per_rank) is read in its part only.
"""

from __future__ import annotations

import ast
from typing import Iterable, Iterator, Optional

from bcast_lint.reduce import Reduced

PART_LINES = 10_000  # lines of the cut text that one part holds, about 1 GB less than the whole

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def split(reduced: Reduced, tree: ast.Module) -> tuple[list[Reduced], frozenset[int]]:
    """The parts of the cut text (`[reduced]` when it is small or cannot be split), and the
    original lines of the frame, which every part holds."""
    if len(reduced.line_numbers) <= PART_LINES:
        return [reduced], frozenset()
    owners = _owners(tree)
    if owners is None:
        return [reduced], frozenset()
    line_owner = _line_owners(tree, owners)
    groups = _pack(reduced.line_numbers, line_owner)
    if len(groups) < 2:
        return [reduced], frozenset()
    return ([_part(reduced, line_owner, group) for group in groups],
            frozenset(number for number in reduced.line_numbers if line_owner.get(number) is None))


def _owners(tree: ast.Module) -> Optional[list[Optional[int]]]:
    """For each top-level statement, its component (None for the frame); None when the module
    has a single component."""
    statements = tree.body
    defined = [set(_bound_names(statement)) for statement in statements]
    read = [_read_names(statement) for statement in statements]
    linked = _linked(statements, defined, read)
    parent = list(range(len(statements)))

    def find(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    definers: dict[str, int] = {}
    for index in sorted(linked):
        for name in defined[index]:  # a name bound twice ties both statements together
            if name in definers:
                parent[find(index)] = find(definers[name])
            definers[name] = index
    for index in linked:
        for name in read[index]:
            if name in definers:
                parent[find(index)] = find(definers[name])
    roots = {find(index) for index in linked}
    if len(roots) < 2:
        return None
    return [find(index) if index in linked else None for index in range(len(statements))]


def _linked(statements: list[ast.stmt], defined: list[set], read: list[set]) -> set[int]:
    """The statements outside the frame: functions and classes, and the other statements that
    read a name one of them binds, followed until nothing more joins."""
    linked = {index for index, statement in enumerate(statements) if isinstance(statement, _DEFINITIONS)}
    names = {name for index in linked for name in defined[index]}
    grew = True
    while grew:
        joining = {index for index in range(len(statements)) if index not in linked and read[index] & names}
        grew = bool(joining)
        linked |= joining
        names |= {name for index in joining for name in defined[index]}
    return linked


def _line_owners(tree: ast.Module, owners: list[Optional[int]]) -> dict[int, int]:
    """The component of each original line inside a statement outside the frame."""
    owner_of: dict[int, int] = {}
    for statement, owner in zip(tree.body, owners):
        if owner is not None:
            for number in range(_first_line(statement), statement.end_lineno + 1):
                owner_of[number] = owner
    return owner_of


def _pack(line_numbers: tuple[int, ...], line_owner: dict[int, int]) -> list[set[int]]:
    """Components, in the order of the file, packed into groups of about PART_LINES cut lines."""
    sizes: dict[int, int] = {}
    for number in line_numbers:
        owner = line_owner.get(number)
        if owner is not None:
            sizes[owner] = sizes.get(owner, 0) + 1
    groups: list[set[int]] = [set()]
    filled = 0
    for owner, size in sizes.items():  # dicts keep the order of the file
        if filled and filled + size > PART_LINES:
            groups.append(set())
            filled = 0
        groups[-1].add(owner)
        filled += size
    return groups


def _part(reduced: Reduced, line_owner: dict[int, int], group: set[int]) -> Reduced:
    kept = [(line, number) for line, number in zip(reduced.lines, reduced.line_numbers)
            if line_owner.get(number) is None or line_owner[number] in group]
    return Reduced(tuple(line for line, _ in kept), tuple(number for _, number in kept))


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", ())
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def _bound_names(statement: ast.stmt) -> Iterator[str]:
    """The module-level names a top-level statement binds, and those its functions declare
    `global` and so bind too."""
    if isinstance(statement, _DEFINITIONS):
        yield statement.name
    for node in _module_level_nodes(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from ((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, _DEFINITIONS) and node is not statement:
            yield node.name
    for node in ast.walk(statement):
        if isinstance(node, ast.Global):
            yield from node.names


def _module_level_nodes(statement: ast.stmt) -> Iterable[ast.AST]:
    """The nodes of `statement` that run at module level: not the bodies of its functions and
    classes (a class body binds the class's names, not the module's)."""
    pending = [statement]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, _DEFINITIONS):
            pending.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                pending.extend(node.bases)
                pending.extend(node.keywords)
            continue
        pending.extend(ast.iter_child_nodes(node))


def _read_names(statement: ast.stmt) -> set[str]:
    """Every name the statement reads, in its functions' bodies too."""
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}

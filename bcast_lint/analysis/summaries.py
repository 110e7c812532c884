"""Function summaries: what calling a project function does, as far as the rules care.

A summary says whether every rank that calls the function runs a collective (directly or through
the functions it calls), which of its parameters it broadcasts or uses as the source rank, on
which ranks it may return None, and whether what it returns is a rank test. Rules use it at call
sites: a call of a collective-running function is a collective (a derived `Api`), so every rule
that reads `ModuleAnalysis.calls` sees it with no change of its own.

A collective over an explicit process group does not make its function a collective for the
callers: which ranks belong to the group is decided where the group is built, and a caller's
group-rank condition often selects exactly those ranks (colossalai's 3D layers).

Each summary is computed once per function, lazily, only for functions a call site in analysed
code reaches. CPython's `ast` index (analysis.project) first decides whether the function can run
a collective or test a rank at all; only then is the function's own text (with its module's
imports in front, so names resolve) parsed by LibCST and walked in the same worlds and with the
same rank conditions as any other scope. Functions that call each other in a cycle are summarised
together, to a fixpoint (Summaries._solve), after the functions they call outside the cycle.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from bcast_lint.analysis import apis, frameworks
from bcast_lint.analysis.callers import parameter_positions
from bcast_lint.analysis.divergence import (DATA_SIZED, SELECTED, Divergence, Passed, PassedLength, agreed_value,
                                           divergence_of)
from bcast_lint.analysis.environment import reads_environment, returned_reads
from bcast_lint.analysis.expressions import is_none, is_self_attribute, last_name, none_test
from bcast_lint.analysis.flow import ASSIGNED, OTHER, Definition, walk_scope
from bcast_lint.analysis.gradients import gradients_kept_apart, reads_gradients
from bcast_lint.analysis.graphs import components
from bcast_lint.analysis.positions import node_code
from bcast_lint.analysis.project import FunctionIndex, FunctionRef, ModuleIndex, Project
from bcast_lint.analysis.raising import failing_parameters
from bcast_lint.analysis.ranks import World, integer_literal, make_worlds
from bcast_lint.analysis.walk import Visitor, ends_in, every_node, holds_own, path_to
from bcast_lint.analysis.words import calls_collective, names_rank, reads_clock
from bcast_lint.source import Source

WorldKey = tuple  # (rank, local rank): a World without its size
_MAX_ROUNDS = 4  # of a cycle's fixpoint: each round analyses every function of the cycle again


@dataclass(frozen=True)
class Summary:
    ref: FunctionRef
    api: Optional[apis.Api]  # the function seen as a collective, when every caller runs one
    none_worlds: frozenset  # WorldKeys where it may return None
    value_worlds: frozenset  # WorldKeys where it may return something else
    truth: tuple  # (WorldKey, bool) per world when what it returns is a rank test, else ()
    worlds: tuple  # its WorldKeys: ranks 0..k on a first node, then a second node's first rank
    group: Optional[str] = None  # the parameter naming the collective's process group (default None)
    # Why what it returns, and how many items that holds, can differ between ranks, or None
    # (divergence.Divergence.returns): `if rank != 0: return {}` before `return metrics`.
    varies: Optional[str] = None
    varies_length: Optional[str] = None
    # Its parameters in order (`self` left out), and those whose value reaches what it returns,
    # or decides how many items that holds (`kept.append(s)` under `if s > t`).
    parameters: tuple = ()
    passes: frozenset = frozenset()
    passes_length: frozenset = frozenset()  # whose values decide how many items it returns
    keeps_length: frozenset = frozenset()  # whose length it returns (`sorted(x)`)
    # It returns a name built from the rank (`f"ckpt_{rank}.pt"`, `os.path.join(root, str(rank))`),
    # not the rank or a test on it: a value, and a path, of each rank's own.
    rank_named: bool = False
    # The environment variables whose values reach what it returns (analysis.environment): the
    # caller knows whether its process set one of them on some ranks only.
    environment_reads: frozenset = frozenset()
    # Every value it returns is what a collective agreed on (divergence.agreed_value).
    agreed: bool = False
    # Per item of the tuples it returns: (why the value, why how many items it holds) differs
    # (divergence.Divergence.returns_items), or ().
    items: tuple = ()
    # (parameter, its position, the function as a collective) where it runs one only under `if
    # parameter:` (`def start(self, barrier=False)`): a call passing a true literal runs it.
    flagged: tuple = ()
    # Per item of the tuples it returns: (the parameter its value follows, the parameter how many
    # items it holds follows), each a Passed marker (the parameter's value decides) or a
    # PassedLength one (how many items the parameter holds decides), or None.
    passed_items: tuple = ()

    def passed_on(self, arguments: dict, length: bool) -> Optional[str]:
        """Why what it returns (with `length`: how many items) differs between ranks, given why
        its arguments do (position or keyword -> (why the value, why the length)): the reason
        of the first argument it passes on."""
        for key, (value, size) in arguments.items():
            name = self._parameter(key)
            if not length and name in self.passes and value:
                return value
            if length and name in self.passes_length and value:
                return value
            if length and name in self.keeps_length and size:
                return size
        return None

    def passed_item(self, item: int, arguments: dict, length: bool) -> Optional[str]:
        """passed_on for one item of the tuples it returns: `x, y = load(files)` with `x` made
        of as many rows as `files` names (`torch.randn(sum(ROWS[f] for f in files), 4)`)."""
        marker = self.passed_items[item][1 if length else 0] if item < len(self.passed_items) else None
        for key, (value, size) in arguments.items() if marker is not None else ():
            if self._parameter(key) == marker:
                return size if isinstance(marker, PassedLength) else value
        return None

    def _parameter(self, key) -> Optional[str]:
        """The parameter an argument's position or keyword names."""
        return key if isinstance(key, str) else (self.parameters[key] if key < len(self.parameters) else None)

    def key_for(self, world: World) -> WorldKey:
        """The summary's world that behaves like the caller's `world`."""
        exact = (world.rank, world.local_rank)
        if exact in self.worlds:
            return exact
        if world.local_rank == 0 and world.rank != 0:
            return self.worlds[-1]
        return self.worlds[-2]

    def returns_none_in(self, world: World) -> bool:
        """Whether it returns None in `world` while other ranks get a value."""
        return self.key_for(world) in self.none_worlds and bool(self.value_worlds)

    def certainly_none_in(self, world: World) -> bool:
        """Whether it returns None in `world` whatever the path (for `if x is None:` narrowing)."""
        key = self.key_for(world)
        return key in self.none_worlds and key not in self.value_worlds

    def rank_truth(self, world: World) -> Optional[bool]:
        return dict(self.truth).get(self.key_for(world)) if self.truth else None


# How a function is analysed for its summary: (the summaries, the function's module as LibCST
# parsed it, its path, its Source, its module's index, its class or None) -> the module's
# analysis (analysis.module.ModuleAnalysis, which itself reads summaries: it is passed in).
AnalyseFunction = Callable[["Summaries", cst.Module, str, Source, ModuleIndex, Optional[str]], object]


class Summaries:
    """The summaries of one run, keyed by function and by its module's content.

    Both answers are computed per strongly connected component of the call graph (analysis.graphs),
    callees first: a function in a cycle is answered with the whole cycle, so no answer depends
    on where the cycle was entered."""

    def __init__(self, project: Project, analyse: AnalyseFunction) -> None:
        self.project = project
        self._analyse = analyse
        # Each answer keeps the modules it read, which join the reading file's cache key.
        self._done: dict[tuple[str, str, str], tuple[Optional[Summary], frozenset]] = {}
        self._may_collect: dict[tuple, tuple[bool, frozenset]] = {}
        # key -> the functions of its component, and their keys when it was found (stale once one changed)
        self._components: dict[tuple, tuple[tuple[FunctionRef, ...], tuple]] = {}
        # The functions of the components being solved: their current value, and the component's
        # depth in `_unsettled`, which marks a component that read a value of an outer one still
        # being solved (a call the text-level call graph missed): its answers are not kept.
        self._provisional: dict[FunctionRef, tuple[Optional[Summary], int]] = {}
        self._unsettled: list[bool] = []
        self._read_provisional: list[bool] = []  # per depth: whether a round read its own values

    def _key(self, ref: FunctionRef) -> Optional[tuple[str, str, str]]:
        """What an answer about `ref` is kept under; None when the project has no such function."""
        index = self.project.index(ref.path)
        if index is None or ref.qualname not in index.functions:
            return None
        return (ref.path, index.digest, ref.qualname)

    def _callees(self, ref: FunctionRef) -> list[FunctionRef]:
        """The project functions `ref` calls by name, in a fixed order."""
        return sorted(set(self.project.callees(ref)), key=lambda callee: (callee.path, callee.qualname))

    def _tracked(self, compute):
        """compute()'s answer and the modules it read."""
        outer = self.project.touched
        self.project.touched = set()
        try:
            answer = compute()
            return answer, frozenset(self.project.touched)
        finally:
            self.project.touched = outer | self.project.touched

    # -- the summary, per component ----------------------------------------------------------
    def of(self, ref: FunctionRef) -> Optional[Summary]:
        key = self._key(ref)
        if key is None:
            return None
        if key in self._done:
            summary, read = self._done[key]
            self.project.touched |= read
            return summary
        if ref in self._provisional:  # solving its component: the value of this round
            summary, depth = self._provisional[ref]
            self._read_provisional[depth] = True
            for inner in range(depth + 1, len(self._unsettled)):
                self._unsettled[inner] = True
            return summary
        return self._solve(self._component(ref))[ref]

    def _component(self, ref: FunctionRef) -> tuple[FunctionRef, ...]:
        """The functions whose summaries depend on each other's with `ref`'s. An edge is a call
        whose summary the analysis may read: of a function that may run a collective or test a
        rank. Every component found on the way is kept (they are exact), not solved: a callee's
        summary is computed when the analysis asks for it, which is after its component's
        callees' and before its callers'."""
        known = self._components.get(self._key(ref))
        if known is not None and known[1] == self._keys(known[0]):
            return known[0]

        def successors(function: FunctionRef) -> list[FunctionRef]:
            return [callee for callee in self._callees(function)
                    if self.may_run_collective(callee) or self.may_test_rank(callee)]

        found = components(ref, successors, lambda function: self._key(function) in self._done)
        for component in found:
            members = tuple(sorted(component, key=lambda function: (function.path, function.qualname)))
            for member in members:
                self._components[self._key(member)] = (members, self._keys(members))
        return self._components[self._key(ref)][0]

    def _keys(self, members: tuple[FunctionRef, ...]) -> tuple:
        return tuple(self._key(member) for member in members)

    def _solve(self, members: tuple[FunctionRef, ...]) -> dict[FunctionRef, Optional[Summary]]:
        """The summaries of one component: computed once, or, for a cycle, from "runs nothing"
        again and again, in a fixed order, until a round changes none or reads none of the values
        of the round before (a cycle the text names but no analysis follows: `pong(x)` in a
        comment), or _MAX_ROUNDS."""
        depth = len(self._unsettled)
        self._unsettled.append(False)
        self._read_provisional.append(False)
        self._provisional.update({member: (None, depth) for member in members})
        try:
            solved, read = self._tracked(lambda: self._rounds(members, depth))
        finally:
            for member in members:
                del self._provisional[member]
            unsettled = self._unsettled.pop()
            self._read_provisional.pop()
        if not unsettled:
            for member, summary in solved.items():
                self._done[self._key(member)] = (summary, read)
        return solved

    def _rounds(self, members: tuple[FunctionRef, ...], depth: int) -> dict[FunctionRef, Optional[Summary]]:
        cyclic = len(members) > 1 or members[0] in self._callees(members[0])
        for _ in range(_MAX_ROUNDS if cyclic else 1):
            changed, self._read_provisional[depth] = False, False
            for member in members:
                index = self.project.index(member.path)
                summary = self._compute(member, index, index.functions[member.qualname])
                changed = changed or _settled_form(summary) != _settled_form(self._provisional[member][0])
                self._provisional[member] = (summary, depth)
            if not changed or not self._read_provisional[depth]:
                break  # the same again, or made without reading any value of this round
        return {member: self._provisional[member][0] for member in members}

    # -- cheap tests before any LibCST parse -------------------------------------------------
    def may_run_collective(self, ref: FunctionRef) -> bool:
        """Whether the function's text, or a project function it calls, names a collective.
        Functions of any length are followed (issue 20): a long `evaluate()` that gathers inside
        is the usual helper called on the main process only. Answered per component of the call
        graph, callees first: a function of a cycle that reaches a collective, as all do."""
        key = self._key(ref)
        if key is None:
            return False
        if key not in self._may_collect:
            explored: dict[FunctionRef, tuple[tuple[bool, list], frozenset]] = {}  # and the modules read

            def successors(function: FunctionRef) -> list[FunctionRef]:
                explored[function] = self._tracked(lambda: self._own_collective_and_callees(function))
                return explored[function][0][1]

            def settled(function: FunctionRef) -> bool:
                found = self._key(function)
                return found is None or found in self._may_collect

            for component in components(ref, successors, settled):
                self._settle_collective(component, explored)
        answer, read = self._may_collect[key]
        self.project.touched |= read
        return answer

    def _own_collective_and_callees(self, ref: FunctionRef) -> tuple[bool, list[FunctionRef]]:
        """Whether the function names a collective itself, and else the functions it calls
        (one that names a collective needs no callee to answer)."""
        own = self._names_collective(ref)
        return own, [] if own else self._callees(ref)

    def _settle_collective(self, component: list[FunctionRef], explored: dict) -> None:
        """Record the answer of a component whose callees outside it are answered already."""
        answer = any(explored[member][0][0] for member in component)
        read = frozenset().union(*(explored[member][1] for member in component))
        for member in component:
            for callee in explored[member][0][1]:
                found = self._may_collect.get(self._key(callee)) if callee not in component else None
                if found is not None:
                    answer = answer or found[0]
                    read |= found[1]
        for member in component:
            self._may_collect[self._key(member)] = (answer, read)

    def _names_collective(self, ref: FunctionRef) -> bool:
        text = self._text(ref)
        index = self.project.index(ref.path)
        return text is not None and (calls_collective(text, index.gated_words)
                                     or _calls_forward_wrapper(index, ref, text))

    def may_test_rank(self, ref: FunctionRef) -> bool:
        """Whether the function's text may make a value that differs between ranks: it names the
        rank, reads the environment or the clock, or reads gradients its module averages by hand."""
        index = self.project.index(ref.path)
        function = index.functions.get(ref.qualname) if index is not None else None
        if function is None:
            return False
        text = index.text(function)
        return names_rank(text) or reads_environment(text) or reads_clock(text) \
            or (reads_gradients(text) and index.per_module(gradients_kept_apart))

    def _text(self, ref: FunctionRef) -> Optional[str]:
        index = self.project.index(ref.path)
        function = index.functions.get(ref.qualname) if index is not None else None
        return index.text(function) if function is not None else None

    # -- the summary proper --------------------------------------------------------------------
    def _compute(self, ref: FunctionRef, index: ModuleIndex, function: FunctionIndex) -> Optional[Summary]:
        parsed = _summary_module(index, function)
        if parsed is None:
            return None
        module, source = parsed
        klass = ref.qualname.rsplit(".", 1)[0] if "." in ref.qualname else None
        analysis = self._analyse(self, module, ref.path, source, index, klass)
        func = module.body[-1]
        # Returns are read in plain worlds: a caller's focus group is not the callee's. Without a
        # rank word, what it returns cannot depend on the rank: that walk is skipped.
        worlds = make_worlds(max(analysis.conditions.compared_literals(func), default=0))
        tests_rank = self.may_test_rank(ref)
        none_worlds, value_worlds, truth = _returns(analysis, func, worlds) if tests_rank else (set(), set(), ())
        returned = _returned(analysis, func) if tests_rank else Divergence()
        parameters = tuple(parameter_positions(func, klass is not None))
        # Which parameters reach what it returns or yields: nothing to find without both.
        passing = _returned(analysis, func, {name: (Passed(name), PassedLength(name)) for name in parameters}) \
            if parameters and holds_own(func, (cst.Return, cst.Yield)) else Divergence()
        api, group = _as_api(analysis, ref, func, analysis.worlds.get(func, ()))
        if api is not None and parameters:
            api = _with_failures(api, analysis, func, failing_parameters(self.project, index, function)[1],
                                 parameter_positions(func, klass is not None))
        memoising = next((d for d in func.decorators if last_name(_called(d.decorator)) in _MEMOISING), None)
        if api is not None and memoising is not None:
            api = dataclasses.replace(api, memoised="@" + analysis.code(memoising.decorator))
        elif api is not None and (lazy := _lazy_guard(func)) is not None:
            api = dataclasses.replace(api, memoised=f"'{lazy}' holds the result of its first call")
        # How many items it returns may vary whatever it is handed, without a rank word: a masked
        # selection of its input (`negatives = scores[labels == 0]`, then `negatives.topk(k)`).
        own_length = passing.returns_length if passing.returns_length in (SELECTED, DATA_SIZED) else None
        return Summary(ref, api, frozenset(none_worlds), frozenset(value_worlds), truth,
                       tuple((w.rank, w.local_rank) for w in worlds), group,
                       returned.returns, returned.returns_length or own_length, parameters,
                       frozenset(passing.returned_parameters), frozenset(passing.returned_length_parameters),
                       frozenset(passing.returned_length_of), tests_rank and _returns_rank_named(analysis, func),
                       returned_reads(func) if tests_rank and reads_environment(index.text(function)) else frozenset(),
                       _returns_agreed(analysis, func), returned.returns_items or (),
                       _flagged_api(analysis, ref, func, analysis.worlds.get(func, ()), parameters) if api is None else (),
                       _passed_items(passing.returns_items))


def _returns_agreed(analysis, func: cst.FunctionDef) -> bool:
    """`return fabric.all_reduce(loss, reduce_op="mean").item()`: each return a collective's result,
    or, at the end of the function's body, arithmetic on such results and constants
    (`per_step = fabric.all_reduce(t, "max").item()`, then `return max(1, round(BUDGET / per_step))`)."""
    collectives = {site.call: site for site in analysis.calls}
    returns = _value_returns(func)
    if returns and all(agreed_value(returned.value, collectives) for returned in returns):
        return True
    if returns and all(_literal(returned.value) for returned in returns):
        # `if fabric.all_reduce(spiking, reduce_op="max").item() > 0: ...; return True`, `return False`;
        # not a return in a handler or a loop, which some ranks may reach alone
        paths = [path_to(func, returned) or () for returned in returns]
        tests = [node.test for path in paths for node in path if isinstance(node, cst.If)]
        return bool(tests) and all(_agreed_test(test, collectives) for test in tests) \
            and not any(isinstance(node, _NOT_STRAIGHT) for path in paths for node in path)
    last = func.body.body[-1] if isinstance(func.body, cst.IndentedBlock) and func.body.body else None
    final = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
    return returns == [final] and _made_of(final.value, _agreed_names(func, collectives))


# Statements around a return that some ranks may reach alone, whatever the tests on agreed values.
_NOT_STRAIGHT = (cst.Try, cst.TryStar, cst.ExceptHandler, cst.For, cst.While, cst.With)


def _literal(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) \
        or isinstance(value, cst.Name) and value.value in ("True", "False", "None")


def _agreed_test(test: cst.BaseExpression, collectives: dict) -> bool:
    """`fabric.all_reduce(flag, reduce_op="max").item() > 0`: a collective's result against literals."""
    if isinstance(test, cst.Comparison):
        return agreed_value(test.left, collectives) and all(_literal(c.comparator) for c in test.comparisons)
    return agreed_value(test, collectives)


# Builtins whose result is as alike as what they are handed.
_ARITHMETIC = frozenset({"max", "min", "round", "int", "float", "abs", "bool"})


def _agreed_names(func: cst.FunctionDef, collectives: dict) -> frozenset:
    """The local names that the last top-level assignment of `func`'s body binds to a collective's
    result, and nothing else binds inside a block."""
    agreed: dict = {}
    for statement in func.body.body:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
        for small in smalls:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                agreed[small.targets[0].target.value] = agreed_value(small.value, collectives)
    nested = {name for statement in func.body.body if not isinstance(statement, cst.SimpleStatementLine)
              for kind in (cst.Assign, cst.AugAssign, cst.For, cst.WithItem, cst.NamedExpr)
              for node in every_node(statement, kind) for name in _bound_names(node)}
    return frozenset(name for name, made in agreed.items() if made and name not in nested)


def _bound_names(node: cst.CSTNode) -> set:
    if isinstance(node, cst.Assign):
        targets = [target.target for target in node.targets]
    elif isinstance(node, cst.WithItem):
        targets = [node.asname.name if node.asname is not None else None]
    else:
        targets = [node.target]
    return {name.value for target in targets if target is not None for name in every_node(target, cst.Name)}


def _made_of(value: cst.BaseExpression, agreed: frozenset) -> bool:
    """Arithmetic on `agreed` names, literals and module constants (upper-case names) only."""
    calls = every_node(value, cst.Call)
    if not agreed or any(not (isinstance(call.func, cst.Name) and call.func.value in _ARITHMETIC) for call in calls):
        return False
    called = {call.func.value for call in calls}
    read = {name.value for name in every_node(value, cst.Name)} - called
    return bool(read & agreed) and all(name in agreed or name.isupper() for name in read)


# Decorators that run the function once per distinct arguments and answer later calls from a cache.
_MEMOISING = frozenset({"lru_cache", "cache", "cached", "memoize", "memoized"})


def _called(decorator: cst.BaseExpression) -> cst.BaseExpression:
    """`functools.lru_cache` for `@functools.lru_cache(maxsize=64)`."""
    return decorator.func if isinstance(decorator, cst.Call) else decorator


def _calls_forward_wrapper(index: ModuleIndex, ref: FunctionRef, text: str) -> bool:
    """A method calling `self.<attr>(...)` where its class assigns `self.<attr>` an object whose
    forward runs a collective (`self.model = DDP(net)`, apis.FORWARD_RUNS_COLLECTIVES)."""
    klass, _, _ = ref.qualname.rpartition(".")
    if not klass:
        return False
    framework_map = frameworks.load()
    wrappers = {name.rpartition(".")[2] for name, made in index.attributes.items() if name.startswith(f"{klass}.")
                and any(framework_map.canonical(qualified) in apis.FORWARD_RUNS_COLLECTIVES for qualified, _ in made)}
    return any(re.search(rf"\bself\.{attribute}\s*\(", text) for attribute in wrappers)


def _passed_items(items: Optional[tuple]) -> tuple:
    """Divergence.returns_items of a pass with the parameters seeded: the markers in them."""
    def marker(why: Optional[str]) -> Optional[str]:
        return why if isinstance(why, (Passed, PassedLength)) else None
    return tuple((marker(value), marker(length)) for value, length in items or ())


def _settled_form(summary: Optional[Summary]) -> Optional[Summary]:
    """What a round of a cycle's fixpoint compares: the summary without its call chain, a new
    object each round (what messages render)."""
    if summary is None or summary.api is None:
        return summary
    inside = None if isinstance(summary.api.inside, CallChain) else summary.api.inside
    return dataclasses.replace(summary, api=dataclasses.replace(summary.api, via=None, inside=inside))


def _summary_module(index: ModuleIndex, function: FunctionIndex) -> Optional[tuple[cst.Module, Source]]:
    """The module's imports of the names the function mentions, the literal tables it reads that the
    module defines before it, and the function alone (dedented), as LibCST's tree and the Source
    that maps its lines to the module's."""
    lines = index.lines
    mentioned = set(re.findall(r"[A-Za-z_]\w*", index.text(function)))
    kept: list[tuple[int, str]] = []
    tables = [(first, last, bound) for first, last, bound in index.tables if last < function.first_line]
    for first, last, bound in sorted((*index.imports, *tables)):
        if bound & mentioned or "*" in bound:
            kept.extend((first + offset, line) for offset, line in enumerate(lines[first - 1:last]))
    prefix = lines[function.first_line - 1][:function.column]
    for number in range(function.first_line, function.last_line + 1):
        line = lines[number - 1]
        if line.startswith(prefix):
            kept.append((number, line[len(prefix):]))
        elif not line.strip():
            kept.append((number, line.lstrip(" \t")))
        else:
            return None  # a multi-line string less indented than the def: not worth the risk
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n" for _, line in kept)
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    if not module.body or not isinstance(module.body[-1], cst.FunctionDef):
        return None
    return module, Source.from_text(text).parsed(tuple(number for number, _ in kept))


def _returns(analysis, func: cst.FunctionDef, worlds) -> tuple[set, set, tuple]:
    """Where it may return None, where something else, and its value as a rank test per world."""
    none_worlds: set = set()
    value_worlds: set = set()
    truths: dict = {}
    end = cst.SimpleStatementLine([cst.Pass()])
    body = func.body
    if not isinstance(body, cst.IndentedBlock):
        return none_worlds, value_worlds, ()
    walked = func.with_changes(body=body.with_changes(body=(*body.body, end)))

    def observe(world: World, statement: cst.CSTNode, env) -> None:
        key = (world.rank, world.local_rank)
        if statement is end:  # fell off the end: returns None
            none_worlds.add(key)
            truths.setdefault(key, set()).add(False)
            return
        small = _return_of(statement)
        if small is None:
            return
        kinds = _value_kinds(analysis, small.value, env, world)
        if "none" in kinds:
            none_worlds.add(key)
        if "value" in kinds:
            value_worlds.add(key)
        decided = analysis.conditions.evaluate(small.value, world) if small.value is not None else False
        truths.setdefault(key, set()).add(decided)

    walk_scope(walked, worlds, analysis.conditions, observe, analysis.bindings)
    keys = [(w.rank, w.local_rank) for w in worlds]
    values = [truths.get(key, set()) for key in keys]
    # Decided where the rank decides it, unknown elsewhere (`is_main_process and step % every == 0`
    # is false off the main process, unknown on it); the worlds must not all agree.
    outcomes = {next(iter(v)) for v in values if len(v) == 1}
    decided = all(len(v) == 1 for v in values) and len(outcomes) >= 2 and outcomes != {None} \
        and (None not in outcomes or len(outcomes) == 2)
    truth = tuple((key, next(iter(v))) for key, v in zip(keys, values)) if decided else ()
    return none_worlds, value_worlds, truth


def _returned(analysis, func: cst.FunctionDef, parameters: Optional[dict] = None) -> Divergence:
    """What differs between ranks in `func`, with why what it returns does; `parameters`: those
    seeded as varying (Passed markers, to see which reach what it returns)."""
    collectives = {site.call: site for site in analysis.calls}
    return divergence_of(func, analysis.conditions, analysis.qualified_names, collectives,
                         analysis.returned_variance, parameters, analysis.attributes.entry(func))


def _returns_rank_named(analysis, func: cst.FunctionDef) -> bool:
    """A `return` of the function's own (not of one nested in it) builds a name from the rank: an
    f-string, a `+` or `/` of paths and strings, `os.path.join(...)`, `Path(...)` or
    `"...".format(...)` holding the rank. Arithmetic on the rank (`n // world + (rank < n % world)`)
    is a number, not a name."""
    for returned in _value_returns(func):
        value = returned.value
        building = isinstance(value, cst.FormattedString) or (
            isinstance(value, cst.BinaryOperation) and _holds_text(value)) or (
            isinstance(value, cst.Call) and last_name(value.func) in _NAME_BUILDERS)
        if building and any(analysis.conditions.quantity(node) for kind in (cst.Name, cst.Attribute, cst.Subscript, cst.Call)
                            for node in every_node(value, kind)):
            return True
    return False


# Calls that build a path or a string from their arguments.
_NAME_BUILDERS = frozenset({"join", "Path", "PurePath", "format"})


def _holds_text(operation: cst.BinaryOperation) -> bool:
    """A string or a path among the operands (`root + "/" + str(rank)`, `Path(d) / f"r{rank}"`)."""
    return bool(every_node(operation, cst.SimpleString) or every_node(operation, cst.FormattedString)) or any(
        last_name(call.func) in _NAME_BUILDERS | {"str"} for call in every_node(operation, cst.Call))


def _return_of(statement: cst.CSTNode) -> Optional[cst.Return]:
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return next((s for s in statement.body if isinstance(s, cst.Return)), None)
    return None


def _value_kinds(analysis, value, env, world: World) -> set:
    """{"none"}, {"value"} or both, for a returned expression in `world`."""
    if value is None or is_none(value):
        return {"none"}
    if isinstance(value, cst.IfExp):
        # `None if buckets is None else torch.cat(buckets)`: the arm that `buckets`'s values in
        # this world pick.
        name, none_when = none_test(value.test)
        tested = _value_kinds(analysis, cst.Name(name), env, world) if name in env else None
        if tested in ({"none"}, {"value"}):
            return _value_kinds(analysis, value.body if (tested == {"none"}) == none_when else value.orelse, env, world)
    if isinstance(value, cst.Name) and value.value in env:
        kinds: set = set()
        for definition in env[value.value]:
            if definition.kind == ASSIGNED:
                kinds |= {"none" if is_none(v) else "value" for v in analysis.values(definition, world)}
            elif definition.kind == OTHER:
                kinds.add("value")
        return kinds or {"value"}
    chosen = analysis.values(Definition("", ASSIGNED, value), world)
    return {"none" if is_none(v) else "value" for v in chosen} or {"value"}


def _as_api(analysis, ref: FunctionRef, func: cst.FunctionDef,
            worlds) -> tuple[Optional[apis.Api], Optional[str]]:
    """The function as a collective (a broadcast of one of its parameters, or another collective)
    when every world that calls it reaches the collective, and its group parameter."""
    sites = [site for site in analysis.calls_in(func) if site.rank_decorator is None
             and site.main_process_first is None and not _on_a_group(analysis, site, func)]
    counters = _call_counters(func)
    conditional = _data_conditional(func, lambda test: _decided_by_rank(analysis, test, worlds)
                                    or _every_nth_call(test, counters))
    sites = [site for site in sites if site.statement not in conditional]
    everywhere = [site for site in sites if set(site.reached) == set(worlds)]
    if not everywhere:
        return _in_turns(analysis, ref, sites, worlds), None
    positions = parameter_positions(func, "." in ref.qualname)
    for site in everywhere:
        if site.api.is_broadcast:
            payload = _unchanged_parameter(analysis, site, site.payload, positions)
            if payload is not None:
                api = _wrapper_api(analysis, ref, func, site, payload, positions)
                return api, _group_parameter(analysis, site, func)
    # A framework call that runs collectives inside (apis.HIDDEN) makes the function one too
    # (BCL011), unless it also runs a collective proper.
    site = next((site for site in everywhere if site.api.payload != apis.HIDDEN), everywhere[0])
    return _running(analysis, ref, site, _early_returns(func, site, positions)), _group_parameter(analysis, site, func)


def _running(analysis, ref: FunctionRef, site, early: tuple = ()) -> apis.Api:
    """The function as a collective that runs `site`'s: a framework call's inside it (HIDDEN,
    BCL011), or a collective proper (via the chain)."""
    chain = CallChain(analysis, site)
    if site.api.payload == apis.HIDDEN:
        return apis.Api(ref.qualified_name, apis.HIDDEN, inside=chain, returns_early_on=early)
    return apis.Api(ref.qualified_name, apis.OTHER, via=chain, returns_early_on=early)


def _flagged_api(analysis, ref: FunctionRef, func: cst.FunctionDef, worlds, parameters: tuple) -> tuple:
    """Summary.flagged: a collective every world reaches whose only guard is `if flag:` on a
    parameter of the function (Megatron's `timer.start(barrier=True)`)."""
    positions = parameter_positions(func, "." in ref.qualname)
    for site in analysis.calls_in(func):
        if site.rank_decorator is not None or site.main_process_first is not None or set(site.reached) != set(worlds):
            continue
        path = path_to(func, site.statement) or ()
        guards = [node for node in path if isinstance(node, (cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.With))]
        flag = guards[0].test if len(guards) == 1 and isinstance(guards[0], cst.If) else None
        if isinstance(flag, cst.Name) and flag.value in parameters and not _in_orelse(guards[0], site.statement):
            return flag.value, positions.get(flag.value), _running(analysis, ref, site)
    return ()


def _in_orelse(statement: cst.If, inner: cst.CSTNode) -> bool:
    return statement.orelse is not None and path_to(statement.orelse, inner) is not None


def _with_failures(api: apis.Api, analysis, func: cst.FunctionDef, failing: dict, positions: dict) -> apis.Api:
    """The function as a collective, with the parameters on which its work can raise
    (analysis.raising), anywhere and before its first collective."""
    start = analysis.position(func.name).start.line
    first = min((analysis.position(site.call).start.line - start for site in analysis.calls_in(func)), default=0)
    return dataclasses.replace(api, fails_on=tuple((name, positions.get(name)) for name in sorted(failing)),
                               fails_before=tuple((name, positions.get(name)) for name in sorted(failing)
                                                  if failing[name] < first))


def _in_turns(analysis, ref: FunctionRef, sites: list, worlds) -> Optional[apis.Api]:
    """The function as a collective where no one call reaches every rank, but every rank runs as
    many of them, each on its own branch of rank tests: the "rank 0 first" pair, a barrier for
    the others before the work and one for rank 0 after it (transformers' load_and_cache_examples).
    A caller that runs it on some ranks only leaves the others' partners missing."""
    if not sites or not worlds:
        return None
    counts = {sum(world in site.reached for site in sites) for world in worlds}
    if len(counts) != 1 or counts == {0}:
        return None
    return apis.Api(ref.qualified_name, apis.OTHER, via=CallChain(analysis, sites[0]))


def _call_counters(func: cst.FunctionDef) -> frozenset[str]:
    """The attributes of `self` that the method's body adds to on every call (`self.local_step += 1`)."""
    return frozenset(node_code(small.target) for statement in func.body.body
                     if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
                     if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign)
                     and is_self_attribute(small.target))


def _every_nth_call(test: cst.BaseExpression, counters: frozenset[str]) -> bool:
    """`self.local_step % self.sync_every == 0` of a counter the method adds to on every call: the
    collective under it runs on every N-th call, as many times on every rank that calls it as
    often (a caller that skips calls on some ranks sets them apart: DiLoCo's outer step)."""
    return isinstance(test, cst.Comparison) and isinstance(test.left, cst.BinaryOperation) \
        and isinstance(test.left.operator, cst.Modulo) and node_code(test.left.left) in counters


def _decided_by_rank(analysis, test: cst.BaseExpression, worlds) -> bool:
    """A test every world answers from the rank alone (`args.local_rank == 0`)."""
    return bool(worlds) and all(analysis.conditions.evaluate(test, world) is not None for world in worlds)


def _early_returns(func: cst.FunctionDef, site, positions: dict) -> tuple:
    """The function's top-level `if <test on a parameter>: return ...` before the collective:
    a caller whose argument differs between ranks makes some ranks skip it."""
    found = []
    for statement in func.body.body:
        if statement is site.statement or _contains(statement, site.call):
            break
        if isinstance(statement, cst.If) and statement.orelse is None and ends_in(statement.body, cst.Return):
            names = {leaf.value for leaf in _names_in(statement.test)} & set(positions)
            found.extend((name, positions[name], node_code(statement.test)) for name in sorted(names))
    return tuple(found)


def _contains(statement: cst.CSTNode, node: cst.CSTNode) -> bool:
    return path_to(statement, node) is not None


def _names_in(expr: cst.CSTNode) -> list:
    collector = _Names()
    collector.walk(expr)
    return collector.found


class _Names(Visitor):
    """The plain names an expression reads (not attribute names)."""

    def __init__(self) -> None:
        self.found: list = []

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.walk(node.value)
        return False


def _wrapper_api(analysis, ref: FunctionRef, func, site, payload: str, positions) -> apis.Api:
    inner = site.api
    source = _unchanged_parameter(analysis, site, site.source, positions)
    default_src = inner.default_src if site.source is None else integer_literal(site.source)
    if source is not None:
        default_src = _literal_default(func, source)
    returns_none = not _returns_a_value(func)
    return apis.Api(ref.qualified_name, inner.payload, source, positions.get(source), default_src,
                    returns_none=returns_none, in_place=inner.in_place, nested=inner.nested,
                    payload_position=positions[payload], payload_keyword=payload,
                    via=CallChain(analysis, site))


# An `if` on these runs alike on every rank of a job: the usual guard of a wrapper
# (`if dist.is_available() and dist.is_initialized():`), not a decision about the data.
# A module's training mode (`if self.training:`) is the same on every rank: a forward that syncs
# statistics only in training (a cross-replica norm) is a collective for its callers.
_SETUP_WORDS = ("is_initialized", "is_available", "world_size", "num_processes", "distributed", "self.training")


def _data_conditional(func: cst.FunctionDef, decided: Callable[[cst.BaseExpression], bool]) -> set:
    """The statements of `func` that run only when an `if` on the data (not a setup guard, nor a
    test the rank alone `decided`) lets them: a collective there runs for some arguments only
    (composer's `get_file` runs one only without an object store), so the function is no
    collective for every caller."""
    found: set = set()

    def block(statements, guarded: bool) -> None:
        for statement in statements:
            if guarded:
                found.add(statement)
            if isinstance(statement, cst.If):
                inner = guarded or not (_is_setup_guard(statement.test) or decided(statement.test)
                                        or _lazy_attribute(statement) is not None)
                block(_suite(statement.body), inner)
                orelse = statement.orelse
                if isinstance(orelse, cst.If):
                    block((orelse,), inner)
                elif orelse is not None:
                    block(_suite(orelse.body), inner)
            elif isinstance(statement, (cst.For, cst.While, cst.With, cst.Try, cst.TryStar)):
                for part in (statement.body, getattr(statement, "orelse", None), getattr(statement, "finalbody", None)):
                    body = getattr(part, "body", part)
                    if isinstance(body, cst.BaseSuite):
                        block(_suite(body), guarded)
                for handler in getattr(statement, "handlers", ()):
                    block(_suite(handler.body), True)  # runs only when something failed
            elif isinstance(statement, cst.Match):
                for case in statement.cases:
                    block(_suite(case.body), True)

    block(_suite(func.body), False)
    return found


def _lazy_guard(func: cst.FunctionDef) -> Optional[str]:
    """"self._stats" where the function computes an attribute on its first call only (the
    statement at the top of its body is `if self._stats is None: self._stats = ...`)."""
    return next((attribute for statement in _suite(func.body) if isinstance(statement, cst.If)
                 for attribute in (_lazy_attribute(statement),) if attribute is not None), None)


def _lazy_attribute(statement: cst.If) -> Optional[str]:
    """"self._stats" for `if self._stats is None:` (or `if not self._stats:`) whose body sets
    `self._stats`: the body runs on the first call only, as a cache's miss does."""
    test = statement.test
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        tested = test.expression
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.Is) and is_none(test.comparisons[0].comparator):
        tested = test.left
    else:
        return None
    if not (isinstance(tested, cst.Attribute) and isinstance(tested.value, cst.Name) and tested.value.value == "self"):
        return None
    attribute = tested.attr.value
    for target in every_node(statement.body, cst.AssignTarget):
        node = target.target
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
                and node.attr.value == attribute:
            return f"self.{attribute}"
    return None


def _is_setup_guard(test: cst.BaseExpression) -> bool:
    text = node_code(test)
    return any(word in text for word in _SETUP_WORDS)


def _suite(body: cst.BaseSuite):
    return (body,) if isinstance(body, cst.SimpleStatementSuite) else body.body


def _on_a_group(analysis, site, func: cst.FunctionDef) -> bool:
    """A collective over a process group (`group=...`): its members are whichever ranks the
    callers' conditions select (`if gpc.get_local_rank(mode) == 0:` may be exactly the group),
    so a call under a rank condition is no evidence of a hang. A `group` parameter that
    defaults to None is the world group unless the caller passes one (see Summary.group)."""
    group = site.group_argument
    if group is None or is_none(group.value):
        return False
    return _group_parameter(analysis, site, func) is None


def _group_parameter(analysis, site, func: cst.FunctionDef) -> Optional[str]:
    """The function's own parameter passed unchanged as the collective's group, defaulting to None."""
    group = site.group_argument
    if group is None or not isinstance(group.value, cst.Name):
        return None
    name = group.value.value
    for param in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params):
        if param.name.value == name and param.default is not None and is_none(param.default):
            definitions = analysis.definitions(site, name)
            if all(d.kind == OTHER and d.statement is None for found in definitions.values() for d in found):
                return name
    return None


def _unchanged_parameter(analysis, site, expr, positions) -> Optional[str]:
    """The parameter `expr` is, when no assignment in the function changed it before the call."""
    if not isinstance(expr, cst.Name) or expr.value not in positions:
        return None
    definitions = analysis.definitions(site, expr.value)
    if all(d.kind == OTHER and d.statement is None for found in definitions.values() for d in found):
        return expr.value
    return None


def _literal_default(func: cst.FunctionDef, name: str) -> Optional[int]:
    for param in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params):
        if param.name.value == name and param.default is not None:
            return integer_literal(param.default)
    return None


class _ValueReturns(Visitor):
    """The `return <value>` statements of one function (not of functions nested in it)."""

    def __init__(self, func: cst.FunctionDef) -> None:
        self.func = func
        self.found: list[cst.Return] = []

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and not is_none(node.value):
            self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.func

    def visit_Lambda(self, node) -> bool:
        return False


def _value_returns(func: cst.FunctionDef) -> list[cst.Return]:
    returns = _ValueReturns(func)
    returns.walk(func)
    return returns.found


def _returns_a_value(func: cst.FunctionDef) -> bool:
    return bool(_value_returns(func))


@dataclass(frozen=True, eq=False, repr=False)
class CallChain:
    """"calls accelerator.reduce() (utils.py:12)", and what that call calls (or, for a framework
    call, runs inside) in turn. Rendered
    only when a message shows it: the call's line costs a codegen of its module, and most
    summaries never reach a message."""

    analysis: object  # the analysis.module.ModuleAnalysis of the function holding the call
    site: object  # its analysis.module.CallSite

    def __str__(self) -> str:
        analysis, site = self.analysis, self.site
        where = f"{os.path.basename(analysis.filename)}:{analysis.position(site.call).start.line}"
        call = site.call
        text = f"calls {analysis.code(call.func)}() ({where})" if isinstance(call, cst.Call) else \
            f"reads {analysis.code(call)} ({where})"  # a property
        then = site.api.via or site.api.inside  # a framework call's: what it runs inside
        return f"{text}, which {then}" if then else text


"""Strongly connected components of a graph explored from one node, in dependency order.

As mypy orders its build (graph_utils.strongly_connected_components, then topsort): a function's
summary is computed after those of the functions it calls, and the functions of one cycle
together, so no answer depends on where the cycle was entered or in which order files were read.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterable, TypeVar

Node = TypeVar("Node", bound=Hashable)


def components(start: Node, successors: Callable[[Node], Iterable[Node]],
               settled: Callable[[Node], bool]) -> list[list[Node]]:
    """The strongly connected components reachable from `start` (which is not settled) through
    nodes that are not `settled`, each listed after every component it reaches: callees first.
    Tarjan's algorithm, without recursion (call chains may be thousands deep)."""
    order: dict[Node, int] = {}  # when each node was first reached
    low: dict[Node, int] = {}  # the earliest node on the stack it reaches
    stack: list[Node] = []
    on_stack: set[Node] = set()
    found: list[list[Node]] = []

    def reach(node: Node) -> tuple[Node, Iterable[Node]]:
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        return node, iter(successors(node))

    work = [reach(start)]
    while work:
        node, edges = work[-1]
        for other in edges:
            if settled(other):
                continue
            if other not in order:
                work.append(reach(other))
                break
            if other in on_stack:
                low[node] = min(low[node], order[other])
        else:
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == order[node]:
                found.append(_pop_component(stack, on_stack, node))
    return found


def _pop_component(stack: list, on_stack: set, root) -> list:
    component = []
    while not component or component[-1] != root:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
    return component[::-1]

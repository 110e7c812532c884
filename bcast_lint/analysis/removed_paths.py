"""Paths a rank removes while the other ranks may still be reading them.

Every rank reads a folder all of them name alike (a node's unpacked cache, an evaluation's
shared files), then frees it (`shutil.rmtree(cache, ignore_errors=True)`, or `os.remove(path)`
under `if rank == 0`) with no collective between its last read and the removal. Nothing then
makes the remover wait for the others' reads: a rank whose share takes longer finds the files
gone, raises FileNotFoundError, and the remover waits for it in its next collective until the
timeout (mosaicml/streaming#400, measured in blind40). A collective between the reads and the
removal (a barrier, or the loop's own all-reduce after each read) orders them, and a path named
after the rank, or made unique per process (`tempfile.mkdtemp()`), is each rank's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Collection, Iterator, Optional

import libcst as cst

from bcast_lint.analysis.divergence import PROCESS_UNIQUE
from bcast_lint.analysis.expressions import last_name
from bcast_lint.analysis.positions import node_code
from bcast_lint.analysis.walk import calls_in, every_node, names_read, path_to

REMOVERS = frozenset({"shutil.rmtree", "os.remove", "os.unlink", "os.rmdir"})
_REMOVER_NAMES = frozenset(name.rsplit(".", 1)[1] for name in REMOVERS)
# Calls that read the file or folder they are handed.
READS = frozenset({"open", "load", "load_file", "read_text", "read_bytes", "listdir", "scandir", "copy",
                   "copyfile", "copytree", "imread", "read_csv", "read_parquet", "memmap"})


@dataclass(frozen=True)
class RemovedUnderReaders:
    removal: cst.Call  # `shutil.rmtree(cache, ignore_errors=True)`
    path: cst.BaseExpression  # `cache`
    read: cst.Call  # the last call before it handed the path (`read_row(cache, index)`)
    waiting: cst.Call  # the first collective after it, where the remover waits


def removals_under_readers(scope: cst.FunctionDef, collectives: Collection, qualified: Callable[[cst.CSTNode], set],
                           helper_reads: Callable[[cst.Call, cst.BaseExpression], bool]) -> Iterator[RemovedUnderReaders]:
    """The removals in `scope` of a path that a call before them reads (`torch.load(os.path.join(
    cache, name))`, or a module function that reads what it is handed: `helper_reads(call, argument)`),
    with no collective between that read and the removal and one after it (`collectives`: the
    scope's collective calls). Whether the path is alike on every rank is left to the caller."""
    calls = calls_in(scope.body)
    for at, call in enumerate(calls):
        if call in collectives or not call.args or last_name(call.func) not in _REMOVER_NAMES \
                or not qualified(call.func) & REMOVERS:
            continue
        path = call.args[0].value
        waiting = next((later for later in calls[at + 1:] if later in collectives), None)
        read = _last_read(scope, calls[:at], path, collectives, call, helper_reads)
        if waiting is not None and read is not None and not _unique_to_process(scope, path, qualified):
            yield RemovedUnderReaders(call, path, read, waiting)


def made_from(scope: cst.FunctionDef, path: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The path, and the values its names are bound to in `scope` (`local = copy_to_local(remote)`,
    `with tempfile.TemporaryDirectory() as cache`)."""
    roots = names_read(path)
    bound = [(target.target, assign.value) for assign in every_node(scope, cst.Assign) for target in assign.targets]
    bound += [(item.asname.name, item.item) for item in every_node(scope, cst.WithItem) if item.asname is not None]
    return [path] + [value for target, value in bound if isinstance(target, cst.Name) and target.value in roots]


def _unique_to_process(scope: cst.FunctionDef, path: cst.BaseExpression, qualified: Callable) -> bool:
    """`cache = tempfile.mkdtemp()`, `with tempfile.TemporaryDirectory() as cache`: each rank's own."""
    return any(qualified(call.func) & PROCESS_UNIQUE for value in made_from(scope, path)
               for call in every_node(value, cst.Call))


def _last_read(scope: cst.FunctionDef, before: list, path: cst.BaseExpression, collectives: Collection,
               removal: cst.Call, helper_reads: Callable) -> Optional[cst.Call]:
    """The last call before the removal that reads the path, where no collective runs between it
    and the removal, and which other ranks than the remover's make (not in the branch that holds
    the removal too: `if rank == 0: merge(tmp); shutil.rmtree(tmp)` is one rank's)."""
    named = node_code(path)
    roots = names_read(path)
    for call in reversed(before):
        if call in collectives:
            return None
        handed = [arg.value for arg in call.args if _hands(arg.value, named, roots)]
        reads = last_name(call.func) in READS or any(helper_reads(call, value) for value in handed)
        if handed and reads and not _same_branch(scope, call, removal):
            return call
    return None


def _hands(value: cst.BaseExpression, named: str, roots: set) -> bool:
    """`read_row(cache, i)`, `torch.load(os.path.join(cache, name))`: the path, or one built on it."""
    return node_code(value) == named or (bool(roots) and roots <= names_read(value) and named in node_code(value))


def _same_branch(scope: cst.FunctionDef, read: cst.Call, removal: cst.Call) -> bool:
    """Whether one arm of an `if` (its body, or its `else`) holds both calls."""
    return bool(_arms(scope, read) & _arms(scope, removal))


def _arms(scope: cst.FunctionDef, call: cst.Call) -> set:
    path = path_to(scope, call) or ()
    return {id(inner) for outer, inner in zip(path, path[1:])
            if isinstance(outer, (cst.If, cst.Else)) and isinstance(inner, cst.BaseSuite)}

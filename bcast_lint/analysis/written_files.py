"""Files that only some ranks write, checked by name elsewhere in the module.

A checkpoint manager's `save()` writes `ckpt_dir / "train_state.pt"` under `if self.rank == 0:`,
and its `load()` runs `if (ckpt_dir / "train_state.pt").exists():` on every rank before a
broadcast. Each rank asks its own file system: a rank on another node, or one whose network file
system has not shown it the new file yet, answers differently from rank 0, and the ranks take
different branches (KempnerForge#49: the fix checks on rank 0 and broadcasts the answer). Where
the writing function runs a collective after the write (`dist.barrier()`), or a function that
calls it runs one, the ranks wait for each other, and on one machine's file system their checks
agree: such a write is not counted (that gives up
KempnerForge's own case, whose `save()` ends in a barrier and whose trouble was a network file
system's cache, for silence on programs that are correct wherever the file system is shared).
A directory named after the node (`node{GROUP_RANK}`, the host name) is shared by no other node:
a write there by a process one test picks in the whole job (`is_main_process`, not
`is_local_main_process`) counts whatever follows it (accelerate#2488's teacher fetched to local disk).
A call of one of the module's functions that writes the path it is handed counts as the write.

A written file is known by the last part of its path: a string (`"train_state.pt"`, the tail of
`f"{d}/meta.json"`), a module constant (`_TRAIN_STATE_FILE`) or an attribute of `self`
(`self.state_path`), so `os.path.join(d, NAME)`, `d / NAME` and a local bound to either match.
Read from the module's whole text with CPython's `ast`, only where it calls a file check.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from bcast_lint.analysis.apis import NAMED_LIKE_A_COLLECTIVE
from bcast_lint.analysis.syntax import called_name, parsed
from bcast_lint.analysis.words import tests_rank

# Checks of the file system: the same on every rank of a shared file system, unless the path
# differs between ranks or only some ranks write it.
FILE_CHECKS = frozenset({"exists", "isfile", "isdir", "is_file", "is_dir", "getsize", "listdir", "glob"})
# Calls that write the file named by one of their arguments (its position, or None: the receiver).
FILE_WRITES = {"save": 1, "open": 0, "write_text": None, "write_bytes": None, "save_pretrained": 0,
               "save_checkpoint": 0, "makedirs": 0, "mkdir": None, "touch": None, "copy": 1,
               "copyfile": 1, "copy2": 1}
# `os.replace(tmp, path)`, `os.rename(tmp, path)`, `shutil.move(tmp, path)`: a finished file moved
# into place writes its destination (only through these modules: `name.replace(a, b)` is a string's).
MOVES = {"replace": "os", "rename": "os", "move": "shutil"}
# Of those, the ones that make or fill a directory: its name says nothing of the files in it.
DIRECTORY_WRITES = frozenset({"makedirs", "mkdir", "save_pretrained", "save_checkpoint"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Decorators that run a function on the main process only (Lightning's, accelerate's).
_ONE_RANK_DECORATORS = ("rank_zero_only", "on_main_process", "on_local_main_process", "main_process_only")


def files_written_on_some_ranks(text: str) -> dict[str, int]:
    """The key (path_key) of each file the module writes only under a test on the rank -> the line
    of the write; empty where the module checks no file."""
    if not any(f".{check}(" in text for check in FILE_CHECKS):
        return {}
    tree = parsed(text)
    if tree is None:
        return {}
    functions = [node for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)]
    waiting = _waiting_callers(functions)
    writers = _path_writers(tree)
    # (unparsing every function is not free: only a text that names the node can name it there)
    names_node = any(word in text for word in _NODE_WORDS)
    per_node = _naming_the_node(tree) if names_node else set()
    found: dict[str, int] = {}
    for function in functions:
        locals_ = _single_assignments(function)
        waits = [call.lineno for call in _calls([function]) if called_name(call) in NAMED_LIKE_A_COLLECTIVE]
        for call, local_main in _calls_on_some_ranks(function):
            path = _written_path(call) or _handed_path(call, writers)
            key = path_key(path, locals_)
            # A collective after the write makes every rank wait until it is done: on a file system
            # the ranks share, their checks after that agree. A directory of each node's own
            # (`node{GROUP_RANK}`) is shared by no other node: there only the writer's node has it.
            on_its_node = names_node and not local_main and _names_the_node(path, locals_, per_node)
            if key is not None and (on_its_node or not _waited_for(function, call.lineno, key, waits, waiting)
                                    or _checked_before_a_wait(functions, function.name, key)):
                found.setdefault(key, call.lineno)
    return found


def _waited_for(function: ast.AST, line: int, key: str, waits: list[int], waiting: set[str]) -> bool:
    """Whether every rank meets the others after the write at `line` before the function checks
    the file: a collective after it (before the function's next check of `key`, where one follows
    the write outside a loop), or a caller that runs collectives (`waiting`)."""
    if getattr(function, "name", None) in waiting:
        return True
    check = _next_check(function, line, key)
    return any(line < wait and (check is None or wait < check) for wait in waits)


def _checked_before_a_wait(functions: list, writer: str, key: str) -> bool:
    """`save_best(state)` (run on one rank), then `if os.path.isfile(BEST):` in the same function
    before any collective: the others check before the writer is done, whatever waits later."""
    for caller in functions:
        calls = list(_calls([caller]))
        waits = [call.lineno for call in calls if called_name(call) in NAMED_LIKE_A_COLLECTIVE]
        for call in (call for call in calls if called_name(call) == writer):
            check = _next_check(caller, call.lineno, key)
            if check is not None and not any(call.lineno < wait < check for wait in waits):
                return True
    return False


def _next_check(function: ast.AST, line: int, key: str) -> Optional[int]:
    """The line of the first check of the file `key` after `line` in `function`, where neither is
    in a loop (a loop's next pass may check after its collectives), or None."""
    loops = [(node.lineno, node.end_lineno) for node in ast.walk(function) if isinstance(node, (ast.For, ast.While))]
    if any(start <= line <= end for start, end in loops):
        return None
    locals_ = _single_assignments(function)
    checks = [call.lineno for call in _calls([function]) if called_name(call) in FILE_CHECKS
              and call.lineno > line and path_key(_checked(call), locals_) == key]
    return min(checks) if checks else None


def _checked(call: ast.Call) -> Optional[ast.expr]:
    """The path a file check reads: `os.path.isfile(p)`, `Path(p).exists()`."""
    if call.args:
        return call.args[0]
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(receiver, ast.Call) and called_name(receiver) == "Path" and receiver.args:
        return receiver.args[0]
    return receiver


# What differs between nodes only: the node's index as a launcher sets it, or its host name.
_NODE_WORDS = ("GROUP_RANK", "NODE_RANK", "node_rank", "gethostname")


def _naming_the_node(tree: ast.Module) -> set[str]:
    """The module's functions whose body reads the node's index or host name (`node_dir()`)."""
    return {node.name for node in tree.body if isinstance(node, _FUNCTIONS)
            and any(word in ast.unparse(node) for word in _NODE_WORDS)}


def _names_the_node(path: Optional[ast.expr], locals_: dict, per_node: set[str]) -> bool:
    """`os.path.join(node_dir(), "teacher.pt")`: a path in a directory of the node's own."""
    if path is None:
        return False
    if isinstance(path, ast.Name) and path.id in locals_:
        path = locals_[path.id]
    text = ast.unparse(path)
    return any(word in text for word in _NODE_WORDS) or any(
        called_name(call) in per_node for call in ast.walk(path) if isinstance(call, ast.Call))


def _path_writers(tree: ast.Module) -> dict[str, int]:
    """The module's functions that write a file named by one of their parameters
    (`def fetch(path): torch.save(x, path)`) -> that parameter's position."""
    found = {}
    for function in tree.body:
        if not isinstance(function, _FUNCTIONS):
            continue
        names = [argument.arg for argument in function.args.args]
        for call in _calls(function.body):
            path = _written_path(call)
            if isinstance(path, ast.Name) and path.id in names:
                found.setdefault(function.name, names.index(path.id))
    return found


def _handed_path(call: ast.Call, writers: dict[str, int]) -> Optional[ast.expr]:
    """The path handed to one of the module's writers (`fetch_teacher(teacher_path)`)."""
    position = writers.get(called_name(call)) if isinstance(call.func, ast.Name) else None
    return call.args[position] if position is not None and len(call.args) > position else None


def _waiting_callers(functions: list) -> set[str]:
    """The names of functions called by a function that also runs a collective (`state.save(step)`
    in a training loop that reduces at every step): the ranks meet again after the write."""
    called: set[str] = set()
    for function in functions:
        calls = list(_calls([function]))
        if any(called_name(call) in NAMED_LIKE_A_COLLECTIVE for call in calls):
            called.update(name for name in map(called_name, calls) if name is not None)
    return called


def path_key(path: Optional[ast.expr], locals_: Optional[dict] = None) -> Optional[str]:
    """What names a file whatever directory it is in: the last part of `d / "x.pt"`,
    `os.path.join(d, NAME)` or `f"{d}/x.pt"`, a constant or `self.path`; a local bound once is
    followed (`locals_`: name -> its one value). None for anything else."""
    if isinstance(path, ast.BinOp) and isinstance(path.op, ast.Div):
        return path_key(path.right, locals_)
    if isinstance(path, ast.Call) and called_name(path) in ("join", "joinpath") and path.args:
        return path_key(path.args[-1], locals_)
    if isinstance(path, ast.Constant) and isinstance(path.value, str):
        return _file_name(path.value)
    if isinstance(path, ast.JoinedStr) and path.values and isinstance(path.values[-1], ast.Constant):
        return _file_name(str(path.values[-1].value))
    if isinstance(path, ast.Attribute) and isinstance(path.value, ast.Name) and path.value.id == "self":
        return f"self.{path.attr}"
    if isinstance(path, ast.Name):
        if locals_ and path.id in locals_:
            return path_key(locals_[path.id])
        return path.id if path.id.lstrip("_").isupper() else None  # a module constant
    return None


def _file_name(text: str) -> Optional[str]:
    """`'train_state.pt'` for "ckpt/train_state.pt" or "/train_state.pt": a file's name has a suffix."""
    name = text.rsplit("/", 1)[-1]
    return repr(name) if "." in name.strip(".") else None


def _written_path(call: ast.Call) -> Optional[ast.expr]:
    """The file a call writes: `torch.save(x, p)`, `open(p, "w")`, `Path(p).write_text(s)`."""
    name = called_name(call)
    if name in MOVES:
        return _moved_path(call)
    if name not in FILE_WRITES or name in DIRECTORY_WRITES:
        return None
    if name == "open":
        mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
        writing = isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax")
        return call.args[0] if writing and call.args else None
    position = FILE_WRITES[name]
    if position is None:
        return call.func.value if isinstance(call.func, ast.Attribute) else None
    return call.args[position] if len(call.args) > position else None


def _moved_path(call: ast.Call) -> Optional[ast.expr]:
    """The destination of `os.replace(tmp, path)` (MOVES), or None."""
    func = call.func
    moved = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and MOVES.get(func.attr) == func.value.id and len(call.args) == 2
    return call.args[1] if moved else None


def _calls_on_some_ranks(function: ast.AST) -> Iterator[tuple[ast.Call, bool]]:
    """The calls of `function` that run only where a test on the rank lets them: under an `if`
    on the rank, after `if not is_main: return`, or in a function decorated to run on one rank;
    each with whether the test picks one process per node (`is_local_main_process`)."""
    decorators = [ast.unparse(decorator) for decorator in getattr(function, "decorator_list", ())]
    if any(word in text for text in decorators for word in _ONE_RANK_DECORATORS):
        local = any("local" in text for text in decorators)
        yield from ((call, local) for call in _calls(function.body))
        return
    for index, statement in enumerate(function.body):
        if isinstance(statement, ast.If) and tests_rank(ast.unparse(statement.test)):
            local = _per_node(statement.test)
            if _returns(statement.body) and not statement.orelse:
                # the ranks that get past the guard
                yield from ((call, local) for call in _calls(function.body[index + 1:]))
                return
            yield from ((call, local) for call in _calls(statement.body + statement.orelse))
        elif not isinstance(statement, _FUNCTIONS):
            yield from _guarded_calls(statement)


def _guarded_calls(node: ast.AST) -> Iterator[tuple[ast.Call, bool]]:
    """The calls under an `if` on the rank anywhere inside `node` (a loop's body, a `with`)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _FUNCTIONS):
            continue
        if isinstance(child, ast.If) and tests_rank(ast.unparse(child.test)):
            yield from ((call, _per_node(child.test)) for call in _calls(child.body + child.orelse))
        else:
            yield from _guarded_calls(child)


def _per_node(test: ast.expr) -> bool:
    """`is_local_main_process`, `local_rank == 0`: one process on each node passes."""
    return "local" in ast.unparse(test).lower()


def _calls(statements: list) -> Iterator[ast.Call]:
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                yield node


def _returns(statements: list) -> bool:
    return bool(statements) and isinstance(statements[-1], ast.Return)


def _single_assignments(function: ast.AST) -> dict[str, ast.expr]:
    """The locals of `function` assigned exactly once, each with its value."""
    values: dict[str, list] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
    return {name: assigned[0] for name, assigned in values.items() if len(assigned) == 1}

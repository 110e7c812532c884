"""Runs inside every rank: instrument the collectives, then run the user's script unchanged.

Started by the launcher as ``torchrun ... -m bcast_lint.harness.bootstrap SCRIPT ARGS...``. The
user's file is never edited; everything happens before `runpy` executes it:

1. This rank's stdout and stderr go to files in the record directory, and `faulthandler` writes
   there too, so a rank killed by SIGABRT inside gloo still says where and why.
2. `torch.distributed`'s collectives and Accelerate's `broadcast`/`broadcast_object_list` are
   replaced by recording wrappers, in their home modules and under every name any already-imported
   module bound them to (`accelerate.utils` re-exports them, for instance). A collective called from
   inside another one (Accelerate's broadcast calls torch's) passes straight through, so each user
   call is recorded once.
3. `PartialState()` defaults to `cpu=True`: it ignores `ACCELERATE_USE_CPU`, and without it every
   process on a CPU-only host would be its own main process.
4. A trace hook records each line of the script the first time the rank runs it (REACHED), so
   the report can tell a finding whose line ran from one the run never reached.

For each call the wrapper writes ENTER before the real collective (so a hang shows who waits
where) and EXIT after it, with a fingerprint of the argument after the call and of the returned
value. A broadcast that fills a temporary (`dist.broadcast(x.clone(), 0)`,
`broadcast_object_list([cfg])`) fills it correctly, so the fingerprints of the argument agree; to
catch it, when the argument written at the call site is a method call on a variable or a list or
tuple of variables, those variables are fingerprinted too ("watched"), in the calling frame, right
after the call. Only calls written in the script itself are watched.

At the end the script's namespace is checked for the names listed in `BCAST_LINT_CHECK`
(`--check`), FINISHED is written, and the rank waits, by polling the other ranks' record files
rather than through torch.distributed, until every rank has finished. That wait turns a collective
called on some ranks only into a hang that names who waits where, instead of a secondary
`Connection closed by peer` on the ranks left behind. Then, if the script never called
`destroy_process_group()`, the bootstrap does, which avoids the SIGABRT some ranks otherwise die of
at exit; FINISHED says so, and the report warns about it.
"""

from __future__ import annotations

import ast
import faulthandler
import functools
import hashlib
import importlib.abc
import importlib.machinery
import inspect
import linecache
import os
import pickle
import runpy
import sys
import threading
import time
import types
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from bcast_lint.analysis.project import dotted_name
from bcast_lint.harness import protocol
from bcast_lint.harness.protocol import BROADCAST, OTHER_COLLECTIVE, Event

TORCH_BROADCASTS = ("broadcast", "broadcast_object_list")
TORCH_COLLECTIVES = (
    "barrier",
    "monitored_barrier",
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "gather",
    "gather_object",
    "scatter",
    "scatter_object_list",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all",
    "all_to_all_single",
    "send",
    "recv",
)
ACCELERATE_BROADCASTS = ("broadcast", "broadcast_object_list")
PLAIN_TYPES = (int, float, complex, bool, str, bytes, type(None))
POLL_SECONDS = 0.05


class Recorder:
    """Appends this rank's events to its record file, one flushed line each."""

    def __init__(self, record_dir: str, rank: int):
        self.rank = rank
        self._file = open(protocol.record_path(record_dir, rank), "a", encoding="utf-8")
        self._lock = threading.Lock()
        self._calls = 0

    def next_call(self) -> int:
        with self._lock:
            self._calls += 1
            return self._calls - 1

    def write(self, kind: str, **fields) -> None:
        event = Event(kind=kind, rank=self.rank, time=time.time(), **fields)
        with self._lock:
            self._file.write(protocol.encode(event) + "\n")
            self._file.flush()


class Script:
    """The user's script: where it is, and how its lines are shown in reports."""

    def __init__(self, path: str, shown: str | None = None):
        self.path = path
        self.shown = shown or path
        self.absolute = os.path.abspath(path)

    def site(self, frame: types.FrameType | None) -> str:
        """The innermost line of the script on the stack, else the line that made the call."""
        innermost = frame
        while frame is not None and frame.f_code.co_filename != self.absolute:
            frame = frame.f_back
        if frame is not None:
            return f"{self.shown}:{frame.f_lineno}"
        return f"{innermost.f_code.co_filename}:{innermost.f_lineno}" if innermost else "?"

    def callers(self, frame: types.FrameType | None) -> tuple[str, ...]:
        """The script's lines on the stack outside the innermost one: the calls of the helpers
        that led to the collective (a finding at a helper's call is tied there)."""
        lines = []
        while frame is not None:
            if frame.f_code.co_filename == self.absolute:
                lines.append(f"{self.shown}:{frame.f_lineno}")
            frame = frame.f_back
        return tuple(lines[1:])

    def error_site(self, error: BaseException) -> str | None:
        line = None
        traceback = error.__traceback__
        while traceback is not None:
            if traceback.tb_frame.f_code.co_filename == self.absolute:
                line = traceback.tb_lineno
            traceback = traceback.tb_next
        return f"{self.shown}:{line}" if line is not None else None

    def owns(self, frame: types.FrameType) -> bool:
        return frame.f_code.co_filename == self.absolute


# ---------------------------------------------------------------- describing and fingerprinting


def describe(value, depth: int = 0) -> str:
    """What a value is, in the terms that matter for a broadcast: type, shape, dtype, device."""
    if isinstance(value, torch.Tensor):
        layout = "" if value.is_contiguous() else ", non-contiguous"
        shape = tuple(value.shape)
        return f"Tensor(shape={shape}, dtype={value.dtype}, device={value.device}{layout})"
    if isinstance(value, (list, tuple)) and depth < 2:
        items = ", ".join(describe(item, depth + 1) for item in value[:4])
        more = ", ..." if len(value) > 4 else ""
        return f"{type(value).__name__}[{items}{more}]"
    if isinstance(value, dict) and depth < 2:
        items = ", ".join(f"{key!r}: {describe(item, depth + 1)}" for key, item in list(value.items())[:4])
        return f"dict{{{items}}}"
    return type(value).__name__


def fingerprint(value) -> str:
    """A short digest equal on two ranks exactly when their values are equal, dtype and shape included."""
    digest = hashlib.blake2b(digest_size=8)
    _feed(digest, value)
    return digest.hexdigest()


def _feed(digest, value) -> None:
    if isinstance(value, torch.Tensor):
        digest.update(f"Tensor{value.dtype}{tuple(value.shape)}".encode())
        digest.update(_tensor_bytes(value))
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__}{len(value)}".encode())
        for item in value:
            _feed(digest, item)
    elif isinstance(value, dict):
        digest.update(f"dict{len(value)}".encode())
        for key, item in value.items():
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (set, frozenset)):
        # Set order follows string hashing, which is randomised per process.
        digest.update("".join(sorted(fingerprint(item) for item in value)).encode())
    else:
        digest.update(_pickled(value))


def _tensor_bytes(tensor) -> bytes:
    flat = tensor.detach().cpu().contiguous().reshape(-1)
    try:
        return flat.view(torch.uint8).numpy().tobytes()
    except (RuntimeError, TypeError):  # sparse, quantized, meta: no plain bytes to compare
        return repr(flat).encode()


def _pickled(value) -> bytes:
    try:
        return pickle.dumps(value, protocol=4)
    except Exception:  # an unpicklable object: compare its type only
        return type(value).__qualname__.encode()


def is_checkable(value) -> bool:
    """Values whose equality across ranks means something; modules, models and functions are not."""
    if isinstance(value, (torch.Tensor, *PLAIN_TYPES)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(is_checkable(item) for item in value)
    if isinstance(value, dict):
        return all(is_checkable(key) and is_checkable(item) for key, item in value.items())
    return False


# ---------------------------------------------------------------- watched variables


def watched_names(frame: types.FrameType) -> tuple[str, ...]:
    """Dotted names a call's first argument is derived from: `x` in `broadcast(x.clone())`.

    Only for a call whose result is discarded: in `x = broadcast_object_list([x])[0]` the value
    reaches `x` through the result, after the call returns.
    """
    call = _call_at(frame)
    if call is None:
        return ()
    argument = call.args[0] if call.args else _first_keyword(call)
    if argument is None or dotted_name(argument) is not None:
        return ()  # no argument, or the variable itself: its own fingerprint covers it
    return tuple(name for name in _sources(argument) if name is not None)


# Instruction positions (`co_positions`) exist from Python 3.11; before, a frame only knows its line.
HAS_POSITIONS = hasattr(types.CodeType, "co_positions")


def _call_at(frame: types.FrameType) -> ast.Call | None:
    """The call expression the frame is executing, when that call is the whole statement (its
    result discarded)."""
    return _call_at_position(frame) if HAS_POSITIONS else _call_at_line(frame)


def _call_at_line(frame: types.FrameType) -> ast.Call | None:
    """Without instruction positions: the one expression statement that is a call and spans the
    frame's current line. Two such statements on a line (`a(x); b(y)`) are ambiguous: none."""
    tree = _parsed(frame.f_code.co_filename)
    line = frame.f_lineno
    calls = [
        node.value for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]  # fmt: skip
    return calls[0] if len(calls) == 1 else None


@functools.lru_cache(maxsize=None)
def _parsed(filename: str) -> ast.Module:
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def _call_at_position(frame: types.FrameType) -> ast.Call | None:
    """From the instruction's source position."""
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if index >= len(positions) or None in positions[index]:
        return None
    start, end, start_col, end_col = positions[index]
    lines = linecache.getlines(frame.f_code.co_filename)[start - 1 : end]
    if not lines:
        return None
    segment = _segment([line.encode() for line in lines], start_col, end_col)
    if " ".join(line.strip() for line in lines) != " ".join(
            part.strip() for part in segment.splitlines()):
        return None
    try:
        node = ast.parse(segment.strip(), mode="eval").body
    except SyntaxError:
        return None
    return node if isinstance(node, ast.Call) else None


def _segment(lines: list[bytes], start_col: int, end_col: int) -> str:
    # Columns are UTF-8 byte offsets.
    if len(lines) == 1:
        return lines[0][start_col:end_col].decode()
    return (lines[0][start_col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]).decode()


def _first_keyword(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("tensor", "object_list"):
            return keyword.value
    return None


def _sources(argument: ast.expr) -> list[str | None]:
    if isinstance(argument, (ast.List, ast.Tuple)):
        return [dotted_name(item) for item in argument.elts]
    while isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute):
        argument = argument.func.value  # x.clone().t() -> x
    return [dotted_name(argument)]


def fingerprint_names(frame: types.FrameType, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    scope = {**frame.f_globals, **frame.f_locals}
    return _fingerprint_in(scope, names)


_MISSING = object()


def _fingerprint_in(scope: dict, names) -> tuple[tuple[str, str], ...]:
    found = []
    for name in names:
        value = _lookup(scope, name)
        if value is not _MISSING and is_checkable(value):
            found.append((name, fingerprint(value)))
    return tuple(found)


def _lookup(scope: dict, dotted: str):
    head, *attributes = dotted.split(".")
    value = scope.get(head, _MISSING)
    for attribute in attributes:
        value = getattr(value, attribute, _MISSING)
    return value


# ---------------------------------------------------------------- wrapping collectives


_inside = threading.local()


def instrument(original, op: str, family: str, recorder: Recorder, script: Script):
    signature = inspect.signature(original)

    @functools.wraps(original)
    def recorded(*args, **kwargs):
        if getattr(_inside, "depth", 0):
            return original(*args, **kwargs)
        caller = sys._getframe(1)
        bound = _bind(signature, args, kwargs)
        argument = next(iter(bound.values()), None)
        call = recorder.next_call()
        site, callers = script.site(caller), script.callers(caller)
        recorder.write(protocol.ENTER, call=call, family=family, op=op, site=site, arg=describe(argument),
                       callers=callers, **_before(family, argument, bound))
        _inside.depth = 1
        try:
            result = original(*args, **kwargs)
        except BaseException as error:
            recorder.write(protocol.EXIT, call=call, family=family, op=op, site=site, callers=callers,
                           error=_error_text(error))
            raise
        finally:
            _inside.depth = 0
        recorder.write(protocol.EXIT, call=call, family=family, op=op, site=site,
                       **_outcome(family, argument, result, caller, script))
        return result

    return recorded


def _bind(signature: inspect.Signature, args, kwargs) -> dict:
    """The call's arguments by parameter name, defaults included; empty when they do not bind."""
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return {}
    bound.apply_defaults()
    return dict(bound.arguments)


def _before(family: str, argument, bound: dict) -> dict:
    """What a broadcast's argument held before the call, and which rank sends it."""
    if family != BROADCAST:
        return {}
    return {"src": source_rank(bound), "before": fingerprint(argument), "blank": is_blank(argument)}


def source_rank(bound: dict) -> int | None:
    """The global rank a broadcast sends from: torch's `src` (or `group_src` within `group`),
    accelerate's `from_process` (a global rank too)."""
    for name in ("src", "from_process"):
        if isinstance(bound.get(name), int):
            return bound[name]
    if isinstance(bound.get("group_src"), int):
        try:
            return dist.get_global_rank(bound.get("group") or c10d._get_default_group(), bound["group_src"])
        except (RuntimeError, ValueError):
            return None
    return None


def is_blank(value) -> bool:
    """Whether a value is only a placeholder: tensors of zeros, None, containers of those. An
    empty tensor holds nothing either way and counts as blank."""
    if value is None:
        return True
    if isinstance(value, torch.Tensor):
        try:
            return value.numel() == 0 or not bool(torch.count_nonzero(value.detach()))
        except (RuntimeError, TypeError):  # sparse, quantized, meta: nothing to tell
            return False
    if isinstance(value, (list, tuple)):
        return all(is_blank(item) for item in value)
    if isinstance(value, dict):
        return all(is_blank(item) for item in value.values())
    return False


def _outcome(family: str, argument, result, caller: types.FrameType, script: Script) -> dict:
    if family != BROADCAST or isinstance(result, dist.Work):
        return {}  # an async_op=True result is not filled yet; nothing to compare
    watched = fingerprint_names(caller, watched_names(caller)) if script.owns(caller) else ()
    return {"value": fingerprint(argument), "result": fingerprint(result), "watched": watched}


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


_initialised = threading.Event()  # set once the script initialises a process group
# Frameworks that set up the process group themselves and own its teardown: a script built on
# them is not expected to call destroy_process_group(), so the harness calling it is no news.
FRAMEWORKS = ("accelerate", "deepspeed", "lightning", "lightning_fabric", "pytorch_lightning", "transformers")
_initialised_by: list[str] = []  # the framework that called init_process_group, if one did


def note_initialisation(original):
    """`init_process_group` that remembers it ran, and which framework called it: a script that
    destroys its group at the end still initialised one, which tells "ran no collective" from
    "never went distributed"."""

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        result = original(*args, **kwargs)
        _initialised.set()
        caller = str(sys._getframe(1).f_globals.get("__name__", "")).split(".")[0]
        if caller in FRAMEWORKS:
            _initialised_by.append(caller)
        return result

    return init_process_group


def patch_collectives(recorder: Recorder, script: Script) -> None:
    """Replace every collective, in its home module and wherever it was imported by name, and
    `init_process_group` by one that notes it ran."""
    replacements = {id(c10d.init_process_group): note_initialisation(c10d.init_process_group)}
    for names, family in ((TORCH_BROADCASTS, BROADCAST), (TORCH_COLLECTIVES, OTHER_COLLECTIVE)):
        for name in names:
            original = getattr(c10d, name, None)
            if original is not None:
                replacements[id(original)] = instrument(original, f"torch.distributed.{name}", family, recorder, script)
    _rebind_everywhere(replacements, [dist, c10d])
    after_import("accelerate.utils.operations", functools.partial(_patch_accelerate, recorder=recorder, script=script))


def _patch_accelerate(operations: types.ModuleType, recorder: Recorder, script: Script) -> None:
    """Accelerate's broadcasts, once its `operations` module has run: the names the rest of
    Accelerate and the script import from it are bound after that."""
    replacements = {
        id(getattr(operations, name)): instrument(
            getattr(operations, name), f"accelerate.utils.{name}", BROADCAST, recorder, script
        )
        for name in ACCELERATE_BROADCASTS
    }
    _rebind_everywhere(replacements, [operations])


def after_import(name: str, then: Callable[[types.ModuleType], None]) -> None:
    """Call `then(module)` once the module `name` has run, or now if it already has. Importing
    Accelerate up front to patch it would cost every rank a third of a second of CPU, in the
    many scripts that never use it."""
    if name in sys.modules:
        then(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds one module as the path finder does, with `then` run after its loader executes it."""

    def __init__(self, name: str, then: Callable[[types.ModuleType], None]) -> None:
        self._name = name
        self._then = then

    def find_spec(self, fullname, path, target=None):
        if fullname != self._name:
            return None
        sys.meta_path.remove(self)  # once: a reload runs the module again, unpatched
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute, then = spec.loader.exec_module, self._then

        def exec_module(module: types.ModuleType) -> None:
            execute(module)
            then(module)

        spec.loader.exec_module = exec_module  # a loader instance of this module alone
        return spec


def _rebind_everywhere(replacements: dict, home_modules: list) -> None:
    for module in [*home_modules, *list(sys.modules.values())]:
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name, value in list(namespace.items()):
            if id(value) in replacements and not name.startswith("__"):
                namespace[name] = replacements[id(value)]


def default_partial_state_to_cpu() -> None:
    """Make `PartialState()` pick gloo on CPU, as `Accelerator()` does with ACCELERATE_USE_CPU,
    once the script imports Accelerate."""
    after_import("accelerate.state", _partial_state_on_cpu)


def _partial_state_on_cpu(state: types.ModuleType) -> None:
    original = state.PartialState.__init__

    @functools.wraps(original)
    def __init__(self, cpu: bool | None = None, **kwargs):
        original(self, cpu=(not torch.cuda.is_available()) if cpu is None else cpu, **kwargs)

    state.PartialState.__init__ = __init__


# ---------------------------------------------------------------- lines the script ran


class LineTracer:
    """A `sys.settrace` hook that writes REACHED the first time this rank runs each line of the
    script. Frames of other files are not traced (their calls cost one comparison each), and a
    line already seen costs a set lookup."""

    def __init__(self, script: Script, recorder: Recorder):
        self._script = script
        self._recorder = recorder
        self._seen: set[int] = set()

    def __call__(self, frame: types.FrameType, event: str, arg):
        return self._line if self._script.owns(frame) else None

    def _line(self, frame: types.FrameType, event: str, arg):
        if event == "line" and frame.f_lineno not in self._seen:
            self._seen.add(frame.f_lineno)
            self._recorder.write(protocol.REACHED, site=f"{self._script.shown}:{frame.f_lineno}")
        return self._line

    def start(self) -> None:
        threading.settrace(self)
        sys.settrace(self)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)


# ---------------------------------------------------------------- running the script


def redirect_output(record_dir: str, rank: int) -> None:
    """Send fds 1 and 2 to per-rank files, so C++ abort messages land there too."""
    for fd, stream in ((1, "stdout"), (2, "stderr")):
        target = os.open(protocol.output_path(record_dir, rank, stream), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(target, fd)
        os.close(target)
    fatal = open(protocol.output_path(record_dir, rank, "fatal"), "w", encoding="utf-8")
    # faulthandler holds a reference to the file, which keeps it open until the process ends.
    faulthandler.enable(file=fatal, all_threads=False)


def run_script(script: Script, args: list[str], recorder: Recorder) -> dict | None:
    """Run the script as `__main__`; the namespace it left, or None when it failed."""
    sys.argv = [script.path, *args]
    sys.path[0] = os.path.dirname(script.absolute)
    tracer = LineTracer(script, recorder)
    tracer.start()
    try:
        return runpy.run_path(script.absolute, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code in (0, None):
            return {}
        recorder.write(protocol.SCRIPT_ERROR, error=_error_text(exit_), site=script.error_site(exit_))
        raise
    except BaseException as error:
        recorder.write(protocol.SCRIPT_ERROR, error=_error_text(error), site=script.error_site(error))
        raise
    finally:
        tracer.stop()


def finish(namespace: dict, recorder: Recorder, record_dir: str, world_size: int) -> None:
    checks = tuple(name for name in os.environ.get(protocol.CHECK_ENV, "").split(",") if name)
    still_initialized = dist.is_available() and dist.is_initialized()
    recorder.write(protocol.FINISHED, watched=_fingerprint_in(namespace, checks), destroyed=still_initialized,
                   initialized=still_initialized or _initialised.is_set(),
                   initialized_by=_initialised_by[0] if _initialised_by else None)
    wait_for_every_rank(record_dir, world_size)
    if still_initialized:
        dist.destroy_process_group()


def wait_for_every_rank(record_dir: str, world_size: int) -> None:
    """Poll the record files, not torch.distributed: a stuck peer must not be joined by a collective."""
    pending = set(range(world_size))
    while pending:
        pending = {rank for rank in pending if not _has_finished(record_dir, rank)}
        if pending:
            time.sleep(POLL_SECONDS)


def _has_finished(record_dir: str, rank: int) -> bool:
    return any(event.kind == protocol.FINISHED for event in protocol.read_events(record_dir, rank))


def _env_int(name: str) -> int | None:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() else None


def main(argv: list[str]) -> None:
    record_dir = os.environ[protocol.RECORD_DIR_ENV]
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    redirect_output(record_dir, rank)
    script = Script(argv[0], os.environ.get(protocol.SCRIPT_NAME_ENV))
    recorder = Recorder(record_dir, rank)
    default_partial_state_to_cpu()
    patch_collectives(recorder, script)
    recorder.write(protocol.START, pid=os.getpid(), local_rank=_env_int("LOCAL_RANK"), node=_env_int("GROUP_RANK"))
    namespace = run_script(script, argv[1:], recorder)
    finish(namespace, recorder, record_dir, world_size)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m bcast_lint.harness.bootstrap SCRIPT [ARGS...]")
    main(sys.argv[1:])

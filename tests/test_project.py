"""Whole-project analysis (issue 13): calls of the project's own functions, across modules.

Each case writes a small package to disk, as the analysis finds modules from the file's path.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bcast_lint.analysis.project import Project
from bcast_lint.engine import lint_source

COMM = """\
import torch
import torch.distributed as dist
from accelerate import Accelerator

accelerator = Accelerator()


def _broadcast(item):
    dist.broadcast(item, 0)


def global_mean(x):
    return accelerator.reduce(x, "mean")


def log_mean(x):
    print(global_mean(x))


def is_main_process():
    return dist.get_rank() == 0


def load_weights(state):
    if not state.is_main_process:
        return None
    return torch.ones(3)


def load_config(path):
    if not path:
        return None
    return torch.ones(3)


def group_sum(x, group):
    dist.all_reduce(x, group=group)


def fetch(path, store=None):
    if store is None:
        names = [path]
        dist.broadcast_object_list(names, src=0)
    return store


def sync_all(x):
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(x)


def ping(n):
    pong(n)


def pong(n):
    if n:
        ping(n - 1)
    dist.barrier()
"""

RELAY = """\
from torch.distributed import *
from torch.distributed import broadcast as send_all
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def package(tmp_path: Path) -> Path:
    write(tmp_path, {"mylib/__init__.py": "from .comm import global_mean, _broadcast as send\n",
                     "mylib/comm.py": COMM, "mylib/distributed.py": RELAY})
    return tmp_path


def findings(root: Path, name: str, text: str, project: Project | None = None) -> list[str]:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    result = lint_source(path.read_bytes(), str(path), project=project)
    return [f"{f.line} {f.code} {f.message}" for f in result.findings]


def test_a_helper_that_runs_a_collective_under_a_rank_condition_names_the_chain(package):
    found = findings(package, "train.py", """\
        from accelerate import Accelerator
        from mylib import global_mean
        accelerator = Accelerator()

        def step(loss, step):
            if accelerator.is_main_process and step % 2 == 0:
                print(global_mean(loss))
        """)
    assert len(found) == 1 and found[0].startswith("7 BCL005 global_mean() runs only on ranks where")
    assert "global_mean() calls accelerator.reduce() (comm.py:13)" in found[0]


def test_the_chain_goes_through_every_helper(package):
    found = findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.comm import log_mean

        def step(loss):
            if dist.get_rank() == 0:
                log_mean(loss)
        """)
    assert len(found) == 1
    assert ("log_mean() calls global_mean() (comm.py:17), which calls accelerator.reduce() (comm.py:13)"
            in found[0])


def test_none_on_some_ranks_passed_to_a_broadcast_wrapper(package):
    found = findings(package, "train.py", """\
        import torch
        from accelerate import Accelerator
        from mylib import send
        accelerator = Accelerator()

        def sync():
            item = None
            if accelerator.is_main_process:
                item = torch.ones(3)
            send(item)
        """)
    assert found == ["10 BCL001 'item' is None on ranks where 'accelerator.is_main_process' is false "
                     "when it reaches _broadcast()"]


def test_the_result_of_a_helper_that_returns_none_off_main(package):
    found = findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.comm import load_weights, load_config

        def weights(state, path):
            w = load_weights(state)
            dist.broadcast(w, 0)
            c = load_config(path)
            dist.broadcast(c, 0)
        """)
    assert found == ["6 BCL001 'w' is None on the ranks where load_weights() returns None when it "
                     "reaches broadcast()"]


def test_a_helper_that_returns_a_rank_test_is_a_rank_condition(package):
    found = findings(package, "train.py", """\
        import torch
        import torch.distributed as dist
        from mylib.comm import is_main_process

        class Trainer:
            def is_rank_0(self):
                return self.rank == 0

            def save(self, x):
                if self.is_rank_0():
                    dist.barrier()

            def sync(self, x):
                if is_main_process():
                    dist.all_reduce(x)
        """)
    assert [f.split(" runs only")[0] for f in found] == ["11 BCL005 barrier()", "15 BCL005 all_reduce()"]
    assert "'self.is_rank_0()' is true" in found[0] and "'is_main_process()' is true" in found[1]


def test_look_alikes_stay_silent(package):
    assert findings(package, "train.py", """\
        import torch
        import torch.distributed as dist
        from mylib.comm import fetch, global_mean, group_sum, is_main_process, load_config

        def fine(loss, group, world_size, store):
            if is_main_process():
                fetch("x", store)  # runs a collective only without a store: not every call
            if world_size > 1:
                global_mean(loss)
            if dist.get_rank(group) == 0:
                group_sum(loss, group)
            if not is_main_process():
                print("not main")
            x = torch.zeros(3)
            if is_main_process():
                x = torch.ones(3)
            dist.broadcast(x, 0)
        """) == []


def test_a_wrappers_setup_guard_still_runs_its_collective(package):
    found = findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.comm import sync_all

        def f(x):
            if dist.get_rank() == 0:
                sync_all(x)
        """)
    assert len(found) == 1 and "sync_all() calls dist.all_reduce() (comm.py:49)" in found[0]


# With a direct collective beside it, and alone: then neither the pre-filter's second chance
# nor the engine's cut may drop the file, whose one collective is `send_all`, which
# mylib/distributed.py binds to torch.distributed.broadcast.
@pytest.mark.parametrize("calls, lines", [(["dist.broadcast(x, 0)", "dist.send_all(x, 0)"], ["8", "9"]),
                                          (["dist.send_all(x, 0)"], ["8"])])
def test_re_exports_of_torch_distributed_are_resolved(package, calls, lines):
    body = "".join(f"            {call}\n" for call in calls)
    found = findings(package, "train.py", """\
        import torch
        from mylib import distributed as dist

        def f(rank):
            x = None
            if rank == 0:
                x = torch.ones(3)
""" + body)
    assert [f.split(" ")[:2] for f in found] == [[line, "BCL001"] for line in lines]


CKPT = """\
def save_sharded(state, path):
    import torch.distributed.checkpoint as dcp

    dcp.save(state, checkpoint_id=path)
"""


def test_a_helper_calling_a_gated_collective_is_followed_whatever_was_read_first(package):
    # dcp.save counts only where torch.distributed.checkpoint is named; the helper's module was
    # followed only when an earlier file had happened to read it (the answer depended on order).
    (package / "mylib" / "ckpt.py").write_text(CKPT)
    train = """\
        import torch.distributed as dist
        from mylib.ckpt import save_sharded

        def f(state, path):
            if dist.get_rank() == 0:
                save_sharded(state, path)
        """
    alone = findings(package, "train.py", train)
    project = Project()
    lint_source((package / "mylib" / "ckpt.py").read_bytes(), str(package / "mylib" / "ckpt.py"), project=project)
    assert alone == findings(package, "train.py", train, project)
    assert len(alone) == 1 and "BCL011 save_sharded(), which calls dcp.save() (ckpt.py:4)" in alone[0]


CYCLE = """\
import torch.distributed as dist


def ping(x, n):
    if n:
        pong(x, n - 1)
    sync(x)


def pong(x, n):
    ping(x, n)


def sync(x):
    dist.all_reduce(x)
"""


@pytest.mark.parametrize("first", [None, "ping"])
def test_a_summary_in_a_cycle_does_not_depend_on_where_the_cycle_was_entered(package, first):
    # Entered from ping, pong is computed while ping is still in progress (taken to run nothing
    # then): that provisional answer must not stay, or pong's callers depend on the file order.
    from bcast_lint.analysis.project import FunctionRef
    from bcast_lint.analysis.module import run_summaries

    path = str(package / "mylib" / "cycle.py")
    Path(path).write_text(CYCLE)
    summaries = run_summaries(Project())
    if first:
        assert summaries.of(FunctionRef(path, "mylib.cycle", first)).api is not None
    pong = FunctionRef(path, "mylib.cycle", "pong")
    assert summaries.may_run_collective(pong)
    assert summaries.of(pong).api is not None


NAMED_IN_COMMENTS = """\
import torch


def is_scalar(x):
    return torch.is_tensor(x) and x.dim() == 0


def ping(x):  # pong(x) sends it back
    torch.distributed.barrier()


def pong(x):  # ping(x) sent it
    torch.distributed.barrier()
"""


def test_a_function_is_not_its_own_callee_by_its_def_line(package):
    from bcast_lint.analysis.project import FunctionRef

    path = str(package / "mylib" / "named.py")
    Path(path).write_text(NAMED_IN_COMMENTS)
    ref = FunctionRef(path, "mylib.named", "is_scalar")
    assert list(Project().callees(ref)) == []


def test_a_cycle_whose_round_reads_none_of_its_values_is_summarised_once(package, monkeypatch):
    # The text names each function in the other's comment: one component for the call graph,
    # but no analysis reads the other's summary, so the first round's answers stand.
    from bcast_lint.analysis.module import run_summaries
    from bcast_lint.analysis.project import FunctionRef
    from bcast_lint.analysis.summaries import Summaries

    path = str(package / "mylib" / "named.py")
    Path(path).write_text(NAMED_IN_COMMENTS)
    computed = []
    compute = Summaries._compute
    monkeypatch.setattr(Summaries, "_compute", lambda self, ref, *rest: computed.append(ref.qualname)
                        or compute(self, ref, *rest))
    summaries = run_summaries(Project())
    ping = FunctionRef(path, "mylib.named", "ping")
    assert summaries.of(ping).api is not None
    assert computed == ["ping", "pong"]


def test_recursive_helpers_terminate(package):
    found = findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.comm import ping

        def f():
            if dist.get_rank() == 0:
                ping(3)
        """)
    assert len(found) == 1 and "ping() calls pong() (comm.py:53), which calls dist.barrier() (comm.py:59)" in found[0]


def test_relative_import_of_accelerate_broadcast(tmp_path):
    # accelerate's own modules import collectives relatively; data_loader.py was not analysed at all.
    write(tmp_path, {"src/accelerate/__init__.py": "", "src/accelerate/utils/__init__.py": ""})
    found = findings(tmp_path, "src/accelerate/data_loader.py", """\
        # distributed under the License is distributed on an "AS IS" BASIS,
        import torch
        from .utils import broadcast


        def f(state):
            x = None
            if state.is_main_process:
                x = torch.randn(3)
            broadcast(x)
        """)
    assert [f.split(" ")[:2] for f in found] == [["10", "BCL001"]]


def test_a_module_is_indexed_once_per_project_not_once_per_importer(package, monkeypatch):
    project = Project()
    built = []
    original = project._build_index
    monkeypatch.setattr(project, "_build_index", lambda path, *rest: built.append(path) or original(path, *rest))
    for index in range(3):
        findings(package, f"user{index}.py", """\
            import torch.distributed as dist
            from mylib.comm import global_mean

            def f(x):
                if dist.get_rank() == 0:
                    global_mean(x)
            """, project)
    comm = [path for path in built if path.endswith("comm.py")]
    assert len(comm) == 1


BASE = """\
import torch.distributed as dist


class Base:
    def is_rank_0(self):
        return dist.get_rank() == 0

    def sync(self, x):
        dist.all_reduce(x)
"""


def test_an_inherited_rank_predicate_is_a_rank_test(package):
    (package / "mylib" / "base.py").write_text(BASE)
    found = findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.base import Base


        class Trainer(Base):
            def save(self, x):
                if self.is_rank_0():
                    dist.barrier()
        """)
    assert [line.split(" ", 2)[:2] for line in found] == [["8", "BCL005"]]
    assert "'self.is_rank_0()' is true" in found[0]


@pytest.mark.parametrize("imported, base", [("from mylib import base", "base.Base"),
                                             ("from mylib.base import Base", "Base")])
def test_an_inherited_helper_that_runs_a_collective(package, imported, base):
    (package / "mylib" / "base.py").write_text(BASE)
    found = findings(package, "train.py", f"""\
        import torch.distributed as dist
        {imported}


        class Trainer({base}):
            def step(self, x):
                if dist.get_rank() == 0:
                    self.sync(x)
        """)
    assert len(found) == 1 and "sync() calls dist.all_reduce() (base.py:9)" in found[0]


def test_an_overriding_method_hides_the_inherited_one(package):
    (package / "mylib" / "base.py").write_text(BASE)
    assert findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.base import Base


        class Trainer(Base):
            def sync(self, x):
                print(x)

            def step(self, x):
                if dist.get_rank() == 0:
                    self.sync(x)
        """) == []


TRAIN = """\
import torch.distributed as dist
from mylib.comm import global_mean


def f(x):
    if dist.get_rank() == 0:
        global_mean(x)
"""


def _cli(root: Path, *args: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "bcast_lint", "--output-format", "json", *args],
                          cwd=root, capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout)


def test_a_changed_helper_invalidates_its_callers_cached_result(package):
    (package / "train.py").write_text(TRAIN)
    assert [f["code"] for f in _cli(package, "train.py")] == ["BCL005"]
    assert [f["code"] for f in _cli(package, "train.py")] == ["BCL005"]  # from the cache
    comm = package / "mylib" / "comm.py"
    comm.write_text(comm.read_text().replace('return accelerator.reduce(x, "mean")', "return x"))
    assert _cli(package, "train.py") == []


def test_a_file_the_pre_filter_skipped_is_relinted_when_its_helper_starts_a_collective(package):
    # The pre-filter's second chance reads mylib/util.py; the cached verdict must depend on it.
    (package / "mylib" / "util.py").write_text("def sync(x):\n    return x\n")
    (package / "train.py").write_text("import torch.distributed as dist\nfrom mylib.util import sync\n\n\n"
                                      "def f(x):\n    if dist.get_rank() == 0:\n        sync(x)\n")
    assert _cli(package, "train.py") == []
    assert _cli(package, "train.py") == []  # from the cache
    (package / "mylib" / "util.py").write_text("import torch.distributed as dist\n\n\n"
                                               "def sync(x):\n    dist.all_reduce(x)\n")
    assert [f["code"] for f in _cli(package, "train.py")] == ["BCL005"]


def test_modules_outside_the_linted_paths_are_read_not_reported(package):
    (package / "train.py").write_text(TRAIN)
    (package / "mylib" / "comm.py").write_text(COMM + "\n\ndef bad():\n    if dist.get_rank() == 0:\n"
                                               "        dist.barrier()\n")
    assert [(Path(f["filename"]).name, f["code"]) for f in _cli(package, "--no-cache", "train.py")] == [
        ("train.py", "BCL005")]


def test_flake8_reports_what_the_cli_reports_across_modules(package):
    (package / "train.py").write_text(TRAIN)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "BCL", "train.py"],
                            cwd=package, capture_output=True, text=True, timeout=120)
    cli = _cli(package, "--no-cache", "train.py")
    assert [line.split(" ")[0] + " " + line.split(" ")[1] for line in flake8.stdout.splitlines()] == [
        f"{f['filename']}:{f['line']}:{f['column']}: {f['code']}" for f in cli]
    assert cli


# -- coverage you can see ----------------------------------------------------------------------
UNREADABLE = """\
import torch.distributed as dist


def f(comm, x):
    dist.broadcast(x, 0)
    comm.all_reduce(x)
"""


def test_the_summary_counts_analysed_and_unresolved_collective_calls(package):
    (package / "train.py").write_text(TRAIN)
    (package / "other.py").write_text(UNREADABLE)
    done = subprocess.run([sys.executable, "-m", "bcast_lint", "--no-cache", "--output-format", "concise",
                           "train.py", "other.py"], cwd=package, capture_output=True, text=True, timeout=120)
    assert ("Analysed 2 collective calls; 1 call named like a collective could not be resolved "
            "(--show-unresolved lists them).") in done.stdout.splitlines()
    shown = subprocess.run([sys.executable, "-m", "bcast_lint", "--no-cache", "--show-unresolved",
                            "other.py"], cwd=package, capture_output=True, text=True, timeout=120)
    assert "other.py:6: comm.all_reduce()" in shown.stdout


def test_json_statistics_carry_the_counts(package):
    (package / "other.py").write_text(UNREADABLE)
    report = json.loads(subprocess.run(
        [sys.executable, "-m", "bcast_lint", "--no-cache", "--statistics", "--output-format", "json", "other.py"],
        cwd=package, capture_output=True, text=True, timeout=120).stdout)
    assert report["collective_calls_analysed"] == 1
    assert report["unresolved"] == [{"filename": "other.py", "line": 6, "call": "comm.all_reduce"}]


def test_the_cache_keeps_the_counts(package):
    (package / "other.py").write_text(UNREADABLE)
    first = _statistics(package)
    assert _statistics(package) == first  # the second run reads the cache
    assert first["collective_calls_analysed"] == 1 and len(first["unresolved"]) == 1


def _statistics(root: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "bcast_lint", "--statistics", "--output-format", "json",
                           "other.py"], cwd=root, capture_output=True, text=True, timeout=120)
    return json.loads(done.stdout)


def test_two_flake8_runs_in_one_process_do_not_share_a_project(package):
    # flake8 keeps the plugin's Project on the run's options: a second run (another root, or the
    # helper changed since) must read the helpers again.
    from flake8.api import legacy
    from flake8.main.options import JobsArgument

    (package / "train.py").write_text(TRAIN)
    comm = package / "mylib" / "comm.py"

    def errors() -> int:
        guide = legacy.get_style_guide(select=["BCL"], jobs=JobsArgument("1"), isolated=True)
        return guide.check_files([str(package / "train.py")]).total_errors

    assert errors() == 1
    comm.write_text(comm.read_text().replace('return accelerator.reduce(x, "mean")', "return x"))
    assert errors() == 0


# -- summaries per strongly connected component --------------------------------------------------
MUTUAL = """\
import torch.distributed as dist


def tree_sum(node):
    for child in node.children:
        child_sum(child)
    dist.all_reduce(node.value)


def child_sum(node):
    tree_sum(node)
"""


@pytest.mark.parametrize("first", [None, "tree_sum", "child_sum"])
def test_mutually_recursive_helpers_both_summarise_as_collective(package, first):
    from bcast_lint.analysis.module import run_summaries
    from bcast_lint.analysis.project import FunctionRef

    path = str(package / "mylib" / "tree.py")
    Path(path).write_text(MUTUAL)
    summaries = run_summaries(Project())
    refs = {name: FunctionRef(path, "mylib.tree", name) for name in ("tree_sum", "child_sum")}
    if first:
        summaries.of(refs[first])
    for ref in refs.values():
        assert summaries.may_run_collective(ref)
        assert summaries.of(ref).api is not None, ref.qualname
    assert "calls tree_sum() (tree.py:11), which calls dist.all_reduce() (tree.py:7)" == str(
        summaries.of(refs["child_sum"]).api.via)


def test_the_components_come_callees_first():
    from bcast_lint.analysis.graphs import components

    graph = {"main": ["a", "done"], "a": ["b"], "b": ["a", "c"], "c": [], "done": ["main"]}
    found = components("main", graph.__getitem__, lambda node: node == "done")
    assert found == [["c"], ["a", "b"], ["main"]]


def test_linting_files_in_either_order_gives_the_same_findings(package):
    from bcast_lint.config import Settings
    from bcast_lint.runner import LINT, process_files

    (package / "mylib" / "cycle.py").write_text(CYCLE)
    (package / "mylib" / "tree.py").write_text(MUTUAL)
    callers = []  # each calls a collective of its own, for the pre-filter (which follows one call deep)
    for helper, module in (("pong", "cycle"), ("ping", "cycle"), ("child_sum", "tree"), ("tree_sum", "tree")):
        path = package / f"use_{helper}.py"
        path.write_text(f"import torch.distributed as dist\nfrom mylib.{module} import {helper}\n\n\n"
                        f"def f(x):\n    if dist.get_rank() == 0:\n        {helper}(x, 1)\n    dist.barrier()\n")
        callers.append((str(path), str(path)))

    def lint(files):
        results = [outcome.result for outcome in process_files(files, Settings(), LINT, 1, None)]
        return sorted((result.filename, result.findings) for result in results)

    forward = lint(callers)
    assert forward == lint(callers[::-1]) == lint([callers[1], callers[3], callers[0], callers[2]])
    assert all(len(findings) == 1 for _, findings in forward), forward


ZERO_FIRST = """\
import contextlib
import torch.distributed as dist


@contextlib.contextmanager
def zero_first(local_rank):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


@contextlib.contextmanager
def timed():
    yield
"""


def test_a_staggered_context_manager_imported_from_another_module(package):
    write(package, {"mylib/ctx.py": ZERO_FIRST})
    found = findings(package, "train.py", """\
        import torch
        import torch.distributed as dist
        from mylib.ctx import timed, zero_first as first

        def build(local_rank, x):
            with first(local_rank):
                dist.all_reduce(x)
            with timed():
                dist.all_reduce(x)
            with first(local_rank):
                y = x + 1
        """)
    assert [f.split(" is called inside")[0] for f in found] == ["7 BCL005 all_reduce()"]


def test_a_method_of_an_object_made_from_a_class_of_another_module(package):
    write(package, {"mylib/meters.py": """\
        import torch.distributed as dist

        class Meter:
            def sync_stats(self, x):
                dist.all_reduce(x)

            def show(self, x):
                print(x)
        """})
    found = findings(package, "train.py", """\
        import torch.distributed as dist
        from mylib.meters import Meter

        def log(x):
            meter = Meter()
            if dist.get_rank() == 0:
                meter.show(x)
                meter.sync_stats(x)
        """)
    assert [f.split(" runs only")[0] for f in found] == ["8 BCL005 sync_stats()"]


TRACKING = """\
import os


def quiet_secondary_processes(accelerator):
    if not accelerator.is_main_process:
        os.environ["WANDB_MODE"] = "disabled"


def tracking_enabled():
    return os.environ.get("WANDB_MODE", "online") != "disabled"
"""


def test_an_environment_variable_a_called_helper_sets_off_the_main_process_varies(tmp_path):
    write(tmp_path, {"tracking.py": TRACKING})
    found = findings(tmp_path, "train.py", """\
        from accelerate import Accelerator
        from tracking import quiet_secondary_processes, tracking_enabled
        accelerator = Accelerator()
        print("process", accelerator.process_index)
        quiet_secondary_processes(accelerator)
        if tracking_enabled():
            accelerator.wait_for_everyone()
        """)
    assert len(found) == 1 and found[0].startswith("7 BCL005 wait_for_everyone() runs only on ranks where")
    assert "the environment variable WANDB_MODE is set by a test on the rank at tracking.py:6" in found[0]


def test_an_environment_variable_set_by_a_helper_nobody_calls_is_alike_everywhere(tmp_path):
    write(tmp_path, {"tracking.py": TRACKING})
    assert findings(tmp_path, "train.py", """\
        import os
        from accelerate import Accelerator
        from tracking import tracking_enabled
        accelerator = Accelerator()
        print("process", accelerator.process_index)
        os.environ["WANDB_MODE"] = "offline"
        if tracking_enabled():
            accelerator.wait_for_everyone()
        """) == []


OUTPUTS = """\
def save_outputs(rows, confusion):
    matrix = confusion.compute() if hasattr(confusion, "compute") else confusion
    print(rows, matrix)
    return matrix
"""


@pytest.mark.parametrize(("made", "flagged"), [("", True), (", sync_on_compute=False", False)])
def test_a_metric_handed_to_a_helper_of_another_module_that_computes_it(tmp_path, made, flagged):
    write(tmp_path, {"outputs.py": OUTPUTS})
    found = findings(tmp_path, "evaluate.py", f"""\
        import torch.distributed as dist
        from torchmetrics.classification import MulticlassConfusionMatrix
        from outputs import save_outputs

        def evaluate(rows):
            confusion = MulticlassConfusionMatrix(num_classes=3{made})
            if dist.get_rank() == 0:
                save_outputs(rows, confusion)
            dist.barrier()
        """)
    expected = ["8 BCL011 save_outputs(), which calls confusion.compute() (outputs.py:2), which runs sync() inside"]
    assert [line[:len(expected[0])] for line in found] == (expected if flagged else [])

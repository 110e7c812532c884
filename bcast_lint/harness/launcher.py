"""Start a script as a real multi-process CPU job under torchrun, with a hard timeout.

On one node the job is `python -m torch.distributed.run --nproc-per-node N --rdzv-backend c10d
--rdzv-endpoint 127.0.0.1:PORT -m bcast_lint.harness.bootstrap SCRIPT ARGS...` on a free port
chosen here, so two verifications can run side by side. With `nnodes` > 1 the job simulates that
many machines on this host: one torchrun agent per node, started together, each with `--nnodes K
--node-rank I --master-addr 127.0.0.1 --master-port PORT` (the same PORT), so RANK runs over all
K*N processes while LOCAL_RANK, GROUP_RANK and accelerate's `is_local_main_process` behave as on
K machines. Each agent runs the launcher's own `main()` on those arguments in a process forked from
one that imported it once (bcast_lint.harness.agents), or, where that cannot start, as the command
itself. The children see:

- `ACCELERATE_USE_CPU=true`, so `Accelerator()` uses gloo (MULTI_CPU) instead of making every
  process its own main process;
- `CUDA_VISIBLE_DEVICES=""`, so the job behaves the same on a machine with a GPU: this harness
  checks the CPU/gloo behaviour, and N ranks on one GPU would only fail with NCCL's duplicate-GPU
  error;
- the record directory (and the `--check` names) for the bootstrap.

`TORCH_DISTRIBUTED_DEBUG` is passed through untouched when the caller sets it, never set here: its
DETAIL mode adds collectives of its own and turns some silent corruptions into errors, so the
harness would no longer observe what the program does without it.

The job counts as hung before the timeout when every rank sits in a collective it recorded
entering, or has finished the script or failed, and nothing new was recorded for STALL_SECONDS:
waiting out the rest of the timeout would tell no more, and a framework's job (Lightning's startup
takes tens of seconds) would otherwise need a long timeout for its hang too. A rank inside a
collective the bootstrap does not record (DDP's own, a framework's barrier) never counts as sitting;
such a job counts as hung once some rank has finished or sits in a recorded collective and no rank
still running has used CPU time for IDLE_SECONDS (a rank that sleeps that long then is judged hung
too).

On timeout every agent is killed. torchrun is started in a session of its own, but it starts
each worker in a new session too, so killing its process group is not enough: every descendant
is killed as well.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import psutil

import bcast_lint
from bcast_lint.harness import agents, protocol
from bcast_lint.harness.protocol import MIN_PROCESSES, RankLog, Run

TAIL_CHARS = 4000
STALL_SECONDS = 10.0
# A rank blocked in a collective uses next to no CPU time; one still working uses more than this
# between two looks. A rank that sleeps or waits on the network for this long while a peer has
# finished is taken to be hung too.
IDLE_SECONDS = 15.0
_BUSY_CPU_SECONDS = 0.2
_POLL_SECONDS = 0.25
_MESH_FAILED = "Gloo connectFullMesh failed"  # torch's RuntimeError, raised in the rank that could not connect


def launch(
    script: str,
    nproc: int = 2,
    timeout: float = 60.0,
    script_args: tuple[str, ...] = (),
    check: tuple[str, ...] = (),
    nnodes: int = 1,
    shown: str | None = None,
) -> Run:
    """Run `script` on `nnodes` simulated nodes of `nproc` processes each; `shown` names it in
    the records (the original's name for a fixed copy). Run once more where gloo could not
    connect the ranks to each other: on a loaded machine a rank's connection to a peer can fail
    while the process group is made (seen once in four runs of the whole test suite, 4 ranks on
    2 simulated nodes), which says nothing of the script."""
    nnodes = max(1, nnodes)
    nproc = max(-(-MIN_PROCESSES // nnodes), nproc)
    run = _launch_once(script, nproc, timeout, script_args, check, nnodes, shown)
    if mesh_not_connected(run):
        run = _launch_once(script, nproc, timeout, script_args, check, nnodes, shown)
    return run


def mesh_not_connected(run: Run) -> bool:
    """Whether a rank failed in gloo's connection of every rank to every other."""
    return any(event.kind == protocol.SCRIPT_ERROR and _MESH_FAILED in (event.error or "")
               for rank in run.ranks for event in rank.events)


def _launch_once(script: str, nproc: int, timeout: float, script_args: tuple[str, ...], check: tuple[str, ...],
                 nnodes: int, shown: str | None) -> Run:
    with tempfile.TemporaryDirectory(prefix="bcast-lint-verify-") as record_dir:
        port = free_port()
        commands = [torchrun_command(script, nproc, port, script_args, nnodes, node) for node in range(nnodes)]
        outputs = [Path(record_dir) / f"torchrun-{node}.log" for node in range(nnodes)]
        stalled = Stall(record_dir, nproc * nnodes)
        timed_out, returncode, stopped_at = run_jobs(commands, job_environment(record_dir, check, shown), timeout,
                                                     outputs, stalled)
        ranks = tuple(collect_rank(record_dir, rank) for rank in range(nproc * nnodes))
        launcher_output = "".join(_tail(output) for output in outputs)[-TAIL_CHARS:]
        return Run(nproc * nnodes, timed_out, returncode, ranks, launcher_output, nnodes, stopped_at)


def torchrun_command(
    script: str, nproc: int, port: int, script_args: tuple[str, ...], nnodes: int = 1, node: int = 0
) -> list[str]:
    if nnodes == 1:
        rendezvous = ["--nnodes", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}"]
    else:  # the static rendezvous: every agent names the same master and its own node rank
        rendezvous = ["--nnodes", str(nnodes), "--node-rank", str(node),
                      "--master-addr", "127.0.0.1", "--master-port", str(port)]  # fmt: skip
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--nproc-per-node", str(nproc),
        *rendezvous,
        "--max-restarts", "0",
        "-m", "bcast_lint.harness.bootstrap",
        script, *script_args,
    ]  # fmt: skip


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def job_environment(record_dir: str, check: tuple[str, ...], shown: str | None = None) -> dict[str, str]:
    # The bootstrap must import from this very checkout, installed or not.
    package_root = str(Path(bcast_lint.__file__).resolve().parent.parent)
    python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": python_path,
        "ACCELERATE_USE_CPU": "true",
        "CUDA_VISIBLE_DEVICES": "",
        protocol.RECORD_DIR_ENV: record_dir,
        protocol.CHECK_ENV: ",".join(check),
        protocol.SCRIPT_NAME_ENV: shown or "",
    }


def run_jobs(
    commands: list[list[str]], env: dict[str, str], timeout: float, outputs: list[Path],
    stalled: Callable[[], bool] = lambda: False,
) -> tuple[bool, int | None, float | None]:
    """Run every agent to completion or kill them all at the timeout, or once `stalled()` says
    the job is hung: (timed out, the first non-zero exit status among the agents, else 0, the
    time.time() at which the kill began where it timed out)."""
    deadline = time.monotonic() + timeout
    jobs: list = []  # subprocess.Popen or agents.Agent
    try:
        for command, output in zip(commands, outputs):
            agent = agents.start(command, env, str(output))  # forked: torch is imported once per harness
            if agent is not None:
                jobs.append(agent)
                continue
            with open(output, "wb") as log:
                jobs.append(subprocess.Popen(
                    command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,
                ))  # fmt: skip
        while any(job.poll() is None for job in jobs):
            if time.monotonic() >= deadline or stalled():
                return True, None, time.time()
            time.sleep(_POLL_SECONDS)
        statuses = [job.returncode for job in jobs]
    finally:
        for job in jobs:
            if job.poll() is None:  # timed out, or the caller was interrupted (pytest-timeout, ^C)
                kill_job(job)
    return False, next((status for status in statuses if status), 0), None


class Stall:
    """Whether every rank of a job sits in a recorded collective (or is done) with nothing new
    recorded for STALL_SECONDS; or some rank is done or sits in a recorded collective while none of
    the others has used CPU time for IDLE_SECONDS: they wait in a collective the bootstrap does
    not record (a framework's own barrier, DDP's broadcast) that will never be joined."""

    def __init__(self, record_dir: str, ranks: int, seconds: float = STALL_SECONDS,
                 idle_seconds: float = IDLE_SECONDS):
        self._record_dir = record_dir
        self._ranks = ranks
        self._seconds = seconds
        self._idle_seconds = idle_seconds
        self._sizes: tuple[int, ...] = ()
        self._since = time.monotonic()
        self._cpu: float | None = None  # the waiting ranks' CPU seconds when they were last busy
        self._idle_since = time.monotonic()

    def __call__(self) -> bool:
        sizes = tuple(_size(protocol.record_path(self._record_dir, rank)) for rank in range(self._ranks))
        if sizes != self._sizes:
            self._sizes, self._since = sizes, time.monotonic()
            self._cpu = None
            return False
        events = [protocol.read_events(self._record_dir, rank) for rank in range(self._ranks)]
        states = [_sitting_or_done(rank_events) for rank_events in events]
        if time.monotonic() - self._since >= self._seconds and all(states) and protocol.ENTER in states:
            return True
        return self._idle(events, states)

    def _idle(self, events: list, states: list) -> bool:
        if not any(states):  # no rank is done or known to sit in a collective
            return False
        waiting = [_pid(rank_events) for rank_events, state in zip(events, states) if state != protocol.FINISHED]
        cpu = _cpu_seconds(waiting) if waiting and None not in waiting else None
        now = time.monotonic()
        if cpu is None or self._cpu is None or cpu - self._cpu > _BUSY_CPU_SECONDS:
            self._cpu, self._idle_since = cpu, now
            return False
        return now - self._idle_since >= self._idle_seconds


def _pid(events: tuple[protocol.Event, ...]) -> int | None:
    return next((event.pid for event in events if event.kind == protocol.START), None)


def _cpu_seconds(pids: list) -> float | None:
    """The CPU time the processes (and their threads) used so far, or None once one is gone."""
    try:
        return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids)
    except psutil.Error:
        return None


def _sitting_or_done(events: tuple[protocol.Event, ...]) -> str | None:
    """ENTER for a rank inside a collective it recorded entering, FINISHED for one that finished
    or failed, None for one still running its own code (or not started)."""
    kinds = [event.kind for event in events]
    if protocol.FINISHED in kinds or protocol.SCRIPT_ERROR in kinds:
        return protocol.FINISHED
    return protocol.ENTER if kinds.count(protocol.ENTER) > kinds.count(protocol.EXIT) else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return -1


def kill_job(job: subprocess.Popen) -> None:
    try:
        descendants = psutil.Process(job.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        descendants = []
    os.killpg(job.pid, signal.SIGKILL)
    for process in descendants:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    job.wait()
    psutil.wait_procs(descendants, timeout=5)


def collect_rank(record_dir: str, rank: int) -> RankLog:
    return RankLog(
        rank=rank,
        events=protocol.read_events(record_dir, rank),
        fatal=_tail(protocol.output_path(record_dir, rank, "fatal")),
        stderr=_tail(protocol.output_path(record_dir, rank, "stderr")),
    )


def _tail(path: Path) -> str:
    if not path.exists():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")[-TAIL_CHARS:]

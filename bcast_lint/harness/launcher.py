"""Start a script as a real multi-process CPU job under torchrun, with a hard timeout.

The job is `python -m torch.distributed.run --nproc-per-node N --rdzv-backend c10d
--rdzv-endpoint 127.0.0.1:PORT -m bcast_lint.harness.bootstrap SCRIPT ARGS...` on a free port
chosen here, so two verifications can run side by side. The children see:

- `ACCELERATE_USE_CPU=true`, so `Accelerator()` uses gloo (MULTI_CPU) instead of making every
  process its own main process;
- `CUDA_VISIBLE_DEVICES=""`, so the job behaves the same on a machine with a GPU: this harness
  checks the CPU/gloo behaviour, and N ranks on one GPU would only fail with NCCL's duplicate-GPU
  error;
- the record directory (and the `--check` names) for the bootstrap.

`TORCH_DISTRIBUTED_DEBUG` is passed through untouched when the caller sets it, never set here: its
DETAIL mode adds collectives of its own and turns some silent corruptions into errors, so the
harness would no longer observe what the program does without it.

On timeout the whole job is killed. torchrun is started in a session of its own, but it starts
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
from pathlib import Path

import psutil

import bcast_lint
from bcast_lint.harness import protocol
from bcast_lint.harness.protocol import RankLog, Run

MIN_PROCESSES = 2
TAIL_CHARS = 4000


def launch(
    script: str,
    nproc: int = 2,
    timeout: float = 60.0,
    script_args: tuple[str, ...] = (),
    check: tuple[str, ...] = (),
) -> Run:
    nproc = max(MIN_PROCESSES, nproc)
    with tempfile.TemporaryDirectory(prefix="bcast-lint-verify-") as record_dir:
        command = torchrun_command(script, nproc, free_port(), script_args)
        output = Path(record_dir) / "torchrun.log"
        timed_out, returncode = run_job(command, job_environment(record_dir, check), timeout, output)
        ranks = tuple(collect_rank(record_dir, rank) for rank in range(nproc))
        return Run(nproc, timed_out, returncode, ranks, _tail(output))


def torchrun_command(script: str, nproc: int, port: int, script_args: tuple[str, ...]) -> list[str]:
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--nproc-per-node", str(nproc),
        "--nnodes", "1",
        "--max-restarts", "0",
        "--rdzv-backend", "c10d",
        "--rdzv-endpoint", f"127.0.0.1:{port}",
        "-m", "bcast_lint.harness.bootstrap",
        script, *script_args,
    ]  # fmt: skip


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def job_environment(record_dir: str, check: tuple[str, ...]) -> dict[str, str]:
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
    }


def run_job(command: list[str], env: dict[str, str], timeout: float, output: Path) -> tuple[bool, int | None]:
    """Run to completion or kill at the timeout: (timed out, torchrun's exit status)."""
    with open(output, "wb") as log:
        job = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            return False, job.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return True, None
        finally:
            if job.poll() is None:  # timed out, or the caller was interrupted (pytest-timeout, ^C)
                kill_job(job)


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

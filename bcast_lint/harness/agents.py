"""torchrun's agents, forked from one process that has imported the launcher already.

Each job of `verify` runs torch.distributed's launcher (`python -m torch.distributed.run`): an
agent process that imports torch, about a second and a half of CPU and a third of a two-rank
job's, only to start the ranks and watch them. Here one process per harness (the "zygote",
`python -m bcast_lint.harness.agents`) imports `torch.distributed.run` once and forks an agent per
job, which runs the launcher's own `main()` on the same arguments, in a session of its own, with
the job's environment, working directory and output file, and exits with the status the command
would have. The zygote is a clean interpreter started on first use (a fork of the caller itself
would copy its threads' locks and a test runner's captured streams); it reads requests as JSON
lines on stdin, answers on stdout, reaps its agents, and ends when its stdin closes. Where it
cannot start, `start()` returns None and the caller starts the command as a process of its own.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import time
import traceback
from typing import Optional

_LAUNCHER = ["-m", "torch.distributed.run"]


class Agent:
    """A forked agent, as the launcher uses a `subprocess.Popen`: `pid`, `poll()`, `wait()`."""

    def __init__(self, zygote: "_Zygote", pid: int) -> None:
        self._zygote = zygote
        self.pid = pid
        self.returncode: Optional[int] = None

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            self.returncode = self._zygote.ask({"poll": self.pid}).get("status")
        return self.returncode

    def wait(self) -> int:
        while self.poll() is None:
            time.sleep(0.05)
        return self.returncode


class _Zygote:
    def __init__(self, env: dict[str, str]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bcast_lint.harness.agents"], env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        if self.ask({"ready": True}).get("ready") is not True:
            raise OSError("the agents' zygote did not start")

    def ask(self, request: dict) -> dict:
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise OSError("the agents' zygote ended")
        return json.loads(line)

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=10)


_zygote: Optional[_Zygote] = None
_unavailable = False


def start(command: list[str], env: dict[str, str], log: str) -> Optional[Agent]:
    """The agent of a `python -m torch.distributed.run ...` command, forked, or None where the
    zygote cannot run it (another command, no zygote)."""
    global _zygote, _unavailable
    if command[1:3] != _LAUNCHER or _unavailable:
        return None
    try:
        if _zygote is None:
            _zygote = _Zygote(env)
            atexit.register(_zygote.close)
        reply = _zygote.ask({"argv": command[3:], "env": env, "log": log, "cwd": os.getcwd()})
        return Agent(_zygote, reply["pid"])
    except (OSError, ValueError, KeyError):
        _unavailable, _zygote = True, None  # start every later job as a process of its own
        return None


# ---------------------------------------------------------------- inside the zygote


def serve() -> None:
    import torch.distributed.run as torchrun  # the import every agent would otherwise repeat

    finished: dict[int, int] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if "argv" in request:
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _run_agent(torchrun, request)
            reply = {"pid": pid}
        elif "poll" in request:
            reply = {"status": _status(request["poll"], finished)}
        else:
            reply = {"ready": True}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _status(pid: int, finished: dict[int, int]) -> Optional[int]:
    """The agent's exit status as Popen.returncode gives it (minus the signal that killed it),
    or None while it runs."""
    if pid not in finished:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return finished.get(pid, -9)
        if done == 0:
            return None
        finished[pid] = os.waitstatus_to_exitcode(status)
    return finished[pid]


def _run_agent(torchrun, request: dict) -> None:
    """In the forked child: become the job's agent, then exit with its status."""
    status = 1
    try:
        os.setsid()
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # not the zygote's answers
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [torchrun.__file__, *request["argv"]]
        torchrun.main(request["argv"])
        status = 0
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:  # noqa: B036 - the command's own exit: a traceback and status 1
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)


if __name__ == "__main__":
    serve()

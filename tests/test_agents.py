"""torchrun's agents forked from the harness's zygote (bcast_lint.harness.agents) behave as the
`python -m torch.distributed.run` processes they replace: the same output, exit status and kill."""

from __future__ import annotations

import os
import sys
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("psutil")

from bcast_lint.harness import agents  # noqa: E402
from bcast_lint.harness.launcher import free_port, kill_job  # noqa: E402

pytestmark = [pytest.mark.runtime, pytest.mark.timeout(120)]


def _torchrun(script) -> list[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "1", "--nnodes", "1",
            "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{free_port()}", "--max-restarts", "0",
            str(script)]


def _started(tmp_path, body: str):
    script = tmp_path / "job.py"
    script.write_text(body)
    log = tmp_path / "agent.log"
    agent = agents.start(_torchrun(script), {**os.environ, "JOB_WORD": "zebra"}, str(log))
    assert agent is not None, "the zygote did not start the agent"
    return agent, log


def test_an_agent_runs_the_script_in_the_jobs_environment_and_exits_0(tmp_path):
    agent, log = _started(tmp_path, "import os\nprint('word', os.environ['JOB_WORD'])\n")
    assert agent.wait() == 0
    assert "word zebra" in log.read_text()


def test_a_failing_rank_makes_the_agent_exit_1_as_torchrun_does(tmp_path):
    agent, log = _started(tmp_path, "import sys\nsys.exit(3)\n")
    assert agent.wait() == 1
    assert "exitcode  : 3" in log.read_text()


def test_a_killed_agent_is_reaped_with_its_ranks(tmp_path):
    import psutil

    agent, _ = _started(tmp_path, "import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    deadline = time.monotonic() + 60
    while not psutil.Process(agent.pid).children(recursive=True):
        assert time.monotonic() < deadline and agent.poll() is None, "the rank never started"
        time.sleep(0.1)
    ranks = psutil.Process(agent.pid).children(recursive=True)
    kill_job(agent)
    assert agent.poll() == -9
    assert not [rank for rank in ranks if rank.is_running() and rank.status() != psutil.STATUS_ZOMBIE]


def test_a_command_other_than_torchrun_is_left_to_the_caller(tmp_path):
    assert agents.start([sys.executable, "-c", "pass"], dict(os.environ), str(tmp_path / "log")) is None

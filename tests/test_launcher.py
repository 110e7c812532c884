"""The launcher's early hang verdict (harness/launcher.py Stall), on records written by hand:
no process is started."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from bcast_lint.harness import protocol
from bcast_lint.harness.launcher import Stall
from bcast_lint.harness.protocol import ENTER, EXIT, FINISHED, START, Event


def _record(directory, rank: int, *kinds: str) -> None:
    with open(protocol.record_path(directory, rank), "a", encoding="utf-8") as record:
        for kind in kinds:
            record.write(protocol.encode(Event(kind, rank, 0.0)) + "\n")


def _settled(stall: Stall) -> bool:
    """The second look: the first one notes the records' sizes."""
    stall()
    return stall()


def test_every_rank_in_a_collective_with_nothing_new_is_a_stall(tmp_path):
    _record(tmp_path, 0, START, ENTER)
    _record(tmp_path, 1, START, ENTER, EXIT, FINISHED)
    assert _settled(Stall(str(tmp_path), 2, seconds=0))


@pytest.mark.parametrize("rank_one", [(START,), (START, ENTER, EXIT), ()], ids=["running", "between", "not-started"])
def test_a_rank_running_its_own_code_is_no_stall(tmp_path, rank_one):
    _record(tmp_path, 0, START, ENTER)
    if rank_one:
        _record(tmp_path, 1, *rank_one)
    assert not _settled(Stall(str(tmp_path), 2, seconds=0))


def test_every_rank_finished_is_no_stall_and_a_new_record_restarts_the_wait(tmp_path):
    _record(tmp_path, 0, START, FINISHED)
    _record(tmp_path, 1, START, FINISHED)
    assert not _settled(Stall(str(tmp_path), 2, seconds=0))  # the job is exiting, not waiting
    stall = Stall(str(tmp_path), 2, seconds=60)
    _record(tmp_path, 0, ENTER)
    assert not _settled(stall)  # sitting, but not for 60 seconds yet


def _record_started(directory, rank: int, pid: int, *kinds: str) -> None:
    with open(protocol.record_path(directory, rank), "a", encoding="utf-8") as record:
        record.write(protocol.encode(Event(START, rank, 0.0, pid=pid)) + "\n")
        for kind in kinds:
            record.write(protocol.encode(Event(kind, rank, 0.0)) + "\n")


def _running(code: str):
    process = subprocess.Popen([sys.executable, "-c", code])
    yield process.pid
    process.kill()
    process.wait()


@pytest.fixture
def sleeper():
    """A process that uses no CPU time, as a rank blocked in a collective does."""
    yield from _running("import time; time.sleep(60)")


@pytest.fixture
def spinner():
    """A process busy with its own work."""
    yield from _running("while True: pass")


def test_a_rank_idle_outside_any_recorded_collective_while_its_peer_sits_in_one_is_a_stall(tmp_path, sleeper):
    _record_started(tmp_path, 0, sleeper, ENTER)  # rank 0 in a recorded barrier
    _record_started(tmp_path, 1, sleeper)  # rank 1 in a framework's own collective: not recorded
    stall = Stall(str(tmp_path), 2, seconds=60, idle_seconds=0.5)
    assert not _settled(stall)  # the records' sizes, then the CPU time they have used
    time.sleep(0.7)
    assert stall()


def test_a_rank_busy_with_its_own_work_is_no_stall_however_long(tmp_path, spinner):
    _record_started(tmp_path, 0, spinner, ENTER, EXIT, FINISHED)
    _record_started(tmp_path, 1, spinner)
    # Looked at for longer than idle_seconds; the window is wide enough that a spinner sharing a
    # loaded 2-core machine with four test workers still uses more than _BUSY_CPU_SECONDS in it.
    stall = Stall(str(tmp_path), 2, seconds=60, idle_seconds=2.0)
    for _ in range(8):
        time.sleep(0.3)
        assert not stall()


def test_idle_ranks_none_of_which_is_done_or_in_a_recorded_collective_are_no_stall(tmp_path, sleeper):
    _record_started(tmp_path, 0, sleeper)
    _record_started(tmp_path, 1, sleeper)
    stall = Stall(str(tmp_path), 2, seconds=60, idle_seconds=0.2)
    stall()
    time.sleep(0.4)
    assert not stall()  # both may be sleeping in their own code: wait for the timeout

"""The launcher's early hang verdict (harness/launcher.py Stall), on records written by hand:
no process is started."""

from __future__ import annotations

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

"""The runtime harness: the report's verdicts on synthetic records, and real runs of the
runtime fixtures (`fixtures/<CODE>/runtime_*.py`, whose first line says `# verify: <outcome>`,
optionally followed by `check=name,name` and `nnodes=N`).

The runtime tests start real torchrun jobs (about 7 s each on 2 cores; 100-155 s for the fixtures
that start Lightning or DeepSpeed, whose hang runs last their whole `timeout=`); select or skip them
with `-m runtime` / `-m "not runtime"`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bcast_lint.fixer import fix_source

from bcast_lint.harness import protocol, verify
from bcast_lint.harness.command import main as verify_main
from bcast_lint.harness.protocol import BROADCAST, OTHER_COLLECTIVE, Event, RankLog, Run
from bcast_lint.harness.report import DIVERGENT, ERROR, HANG, OK, OUTCOMES, UNVERIFIED, judge, own_output

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# `# verify: <outcome>[,<outcome>...] [check=name,name] [nnodes=N] [nproc=N,N] [needs=module]
# [timeout=S]`: the outcome of the broken program (one for every size, or one per size), module-level
# names whose final values must agree across ranks (garbage that never passes a broadcast), how many
# simulated nodes the job runs on, the processes per node of each run (default 2; `2,3` for data that
# may split unevenly), the framework the program runs on (lightning, transformers, deepspeed: the test
# extra pins them), and the seconds each job may run, where starting the framework takes longer than
# HANG_TIMEOUT allows (importing Lightning in two processes alone took over 30 s on the loaded machine).
HEADER = re.compile(r"#\s*verify:\s*([\w,]+)((?:\s+\w+=[\w,]+)*)\s*$")
HANG_TIMEOUT = 30.0  # seconds: startup takes ~7 s on 2 cores, so a hang shows well before this


# ---------------------------------------------------------------- synthetic records


def enter(rank, call, site="s.py:3", arg="Tensor(shape=(4,))", op="torch.distributed.broadcast", t=1.0):
    return Event(protocol.ENTER, rank, t, call=call, family=BROADCAST, op=op, site=site, arg=arg)


def blank_enter(rank, call, before, blank, src=0, site="s.py:3"):
    return Event(protocol.ENTER, rank, 1.0, call=call, family=BROADCAST, op="torch.distributed.broadcast", site=site,
                 arg="Tensor(shape=(4,))", src=src, before=before, blank=blank)  # fmt: skip


def leave(rank, call, value="v", watched=(), error=None, site="s.py:3", t=2.0):
    return Event(
        protocol.EXIT, rank, t, call=call, family=BROADCAST, op="torch.distributed.broadcast", site=site,
        value=None if error else value, result=None if error else "none", watched=watched, error=error,
    )  # fmt: skip


def finished(rank, watched=(), destroyed=False, initialized=True, initialized_by=None):
    return Event(protocol.FINISHED, rank, 3.0, watched=watched, destroyed=destroyed, initialized=initialized,
                 initialized_by=initialized_by)


def run(*events_per_rank, timed_out=False, fatal=(), stderr=(), stopped_at=None):
    ranks = tuple(
        RankLog(rank, tuple(events), dict(fatal).get(rank, ""), dict(stderr).get(rank, ""))
        for rank, events in enumerate(events_per_rank)
    )
    return Run(len(ranks), timed_out, None if timed_out else 0, ranks, stopped_at=stopped_at)


def test_identical_values_are_ok():
    result = judge(run([enter(0, 0), leave(0, 0), finished(0)], [enter(1, 0), leave(1, 0), finished(1)]))
    assert result.outcome == OK
    assert result.details == () and result.warnings == ()
    assert [b.agree for b in result.broadcasts] == [True]


def test_different_values_are_divergent_at_the_site():
    result = judge(run([enter(0, 0), leave(0, 0, "a"), finished(0)], [enter(1, 0), leave(1, 0, "b"), finished(1)]))
    assert result.outcome == DIVERGENT
    assert "s.py:3" in result.details[0] and "the broadcast argument" in result.details[0]
    assert not result.broadcasts[0].agree


def test_a_watched_variable_that_differs_is_divergent():
    ranks = [[enter(r, 0), leave(r, 0, "same", watched=(("x", f"x{r}"),)), finished(r)] for r in (0, 1)]
    result = judge(run(*ranks))
    assert result.outcome == DIVERGENT
    assert "`x`" in result.details[0] and "temporary" in result.details[0]


def test_a_checked_name_that_differs_at_the_end_is_divergent():
    result = judge(run([finished(0, watched=(("total", "a"),))], [finished(1, watched=(("total", "b"),))]))
    assert result.outcome == DIVERGENT
    assert result.details == ("at the end of the script the ranks hold different values for `total`",)


def test_a_different_number_of_broadcasts_is_divergent():
    result = judge(run([enter(0, 0), leave(0, 0), finished(0)], [finished(1)]))
    assert result.outcome == DIVERGENT
    assert "rank 0 made 1, rank 1 made 0" in result.details[0]


def test_an_exception_is_an_error_naming_rank_error_and_site_first_failure_first():
    closed = "RuntimeError: Connection closed by peer [127.0.0.1]:1234"
    result = judge(run(
        [enter(0, 0), leave(0, 0, error=closed, t=5.0)],
        [enter(1, 0, arg="NoneType"), leave(1, 0, error="TypeError: Unsupported types (<class 'NoneType'>)", t=4.0)],
    ))  # fmt: skip
    assert result.outcome == ERROR
    assert result.details[0] == (
        "rank 1: TypeError: Unsupported types (<class 'NoneType'>) at s.py:3 (in torch.distributed.broadcast)"
    )
    assert result.details[1].startswith("rank 0: RuntimeError: Connection closed by peer")
    assert result.details[1].endswith("(after rank 1 failed)")


def test_a_script_error_outside_any_broadcast_is_an_error():
    failure = Event(protocol.SCRIPT_ERROR, 1, 2.0, error="NameError: name 'x' is not defined", site="s.py:9")
    result = judge(run([enter(0, 0)], [failure]))
    assert result.outcome == ERROR
    assert result.details == (
        "rank 1: NameError: name 'x' is not defined at s.py:9",
        "rank 0: waiting in torch.distributed.broadcast at s.py:3",
    )


def test_a_fatal_signal_inside_a_broadcast_is_an_error_with_the_abort_reason():
    stderr = "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n  what(): [pair.cc:1] size mismatch"
    result = judge(run(
        [enter(0, 0), leave(0, 0), finished(0)], [enter(1, 0)],
        fatal=[(1, "Fatal Python error: Aborted\n\nThread 0x1 (most recent call first):")], stderr=[(1, stderr)],
    ))  # fmt: skip
    assert result.outcome == ERROR
    assert result.details[0] == (
        "rank 1: killed by a fatal signal (Fatal Python error: Aborted) inside torch.distributed.broadcast at s.py:3: "
        "[pair.cc:1] size mismatch"
    )


def test_a_timeout_is_a_hang_saying_who_waits_where():
    barrier = Event(protocol.ENTER, 1, 1.0, call=0, family=OTHER_COLLECTIVE, op="torch.distributed.barrier",
                    site="s.py:7")  # fmt: skip
    result = judge(run([enter(0, 0, site="s.py:5")], [barrier], timed_out=True))
    assert result.outcome == HANG
    assert result.details == (
        "rank 0: waiting in torch.distributed.broadcast at s.py:5",
        "rank 1: waiting in torch.distributed.barrier at s.py:7",
    )


def test_a_failure_the_harness_kill_caused_leaves_a_hang_saying_where_the_rank_waited():
    # On a loaded machine the kill of a hung job reaches rank 0 first, and rank 1's wait fails with
    # "Connection reset by peer" before it is killed in turn: still the hang it was.
    reset = "RuntimeError: Connection reset by peer"
    failed = Event(protocol.EXIT, 1, 9.0, call=0, family=OTHER_COLLECTIVE, op="torch.distributed.all_reduce",
                   site="s.py:9", error=reset)  # fmt: skip
    ranks = ([enter(0, 0, site="s.py:5")], [enter(1, 0, site="s.py:9", op="torch.distributed.all_reduce"), failed])
    result = judge(run(*ranks, timed_out=True, stopped_at=8.0))
    assert result.outcome == HANG
    assert result.details[1] == "rank 1: waiting in torch.distributed.all_reduce at s.py:9"
    assert judge(run(*ranks, timed_out=True, stopped_at=9.5)).outcome == ERROR  # it failed before the kill


def test_a_rank_that_finished_while_another_waits_is_a_hang():
    result = judge(run([enter(0, 0)], [finished(1)], timed_out=True))
    assert result.outcome == HANG
    assert result.details[1] == "rank 1: finished the script, waiting for the other ranks"


def test_an_abort_at_exit_after_finishing_is_ok_with_a_warning():
    ranks = [[enter(r, 0), leave(r, 0), finished(r)] for r in (0, 1)]
    result = judge(run(*ranks, fatal=[(1, "Fatal Python error: Aborted")]))
    assert result.outcome == OK
    assert result.warnings == ("rank 1 finished the script, then died at exit: Fatal Python error: Aborted",)


def test_the_harness_destroying_the_process_group_is_a_warning():
    result = judge(run(*[[enter(r, 0), leave(r, 0), finished(r, destroyed=True)] for r in (0, 1)]))
    assert result.outcome == OK
    assert "destroy_process_group()" in result.warnings[0]


def test_a_process_group_that_accelerate_set_up_is_the_harnesss_to_destroy_without_a_warning():
    ranks = [[enter(r, 0), leave(r, 0), finished(r, destroyed=True, initialized_by="accelerate")] for r in (0, 1)]
    result = judge(run(*ranks))
    assert result.outcome == OK and result.warnings == ()


def test_broadcasts_pair_by_order_and_different_lines_only_warn():
    ranks = [[enter(r, 0, site=f"s.py:{r + 3}"), leave(r, 0, site=f"s.py:{r + 3}"), finished(r)] for r in (0, 1)]
    result = judge(run(*ranks))
    assert result.outcome == OK
    assert result.warnings == ("broadcast #1 was reached from different lines: rank 0 at s.py:3, rank 1 at s.py:4",)


@pytest.mark.parametrize("error, launches", [
    ("RuntimeError: Gloo connectFullMesh failed with [../gloo/transport/tcp/pair.cc:144] no error", 2),
    ("RuntimeError: Connection reset by peer", 1),  # a rank's own failure: the verdict stands
])
def test_a_job_whose_ranks_could_not_connect_runs_once_more(monkeypatch, error, launches):
    from bcast_lint.harness import launcher

    failed = run([Event(protocol.SCRIPT_ERROR, 0, 1.0, error=error)], [finished(1)])
    connected = run([finished(0)], [finished(1)])
    runs = [failed, connected]
    monkeypatch.setattr(launcher, "_launch_once", lambda *arguments: runs.pop(0))
    assert launcher.launch("train.py") is (failed if launches == 1 else connected)
    assert len(runs) == 2 - launches


def test_a_job_that_stops_before_any_rank_starts_shows_the_launcher_output():
    result = judge(Run(2, False, 1, (RankLog(0, ()), RankLog(1, ())), "boom\nModuleNotFoundError: nope\n"))
    assert result.outcome == ERROR
    assert result.details[-1] == "ModuleNotFoundError: nope"


def test_the_result_serialises_to_the_documented_json_shape():
    result = judge(run([enter(0, 0), leave(0, 0), finished(0)], [enter(1, 0), leave(1, 0), finished(1)]))
    document = json.loads(json.dumps(result.as_dict()))
    assert set(document) == {"outcome", "summary", "verified", "collectives", "world_size", "ranks", "details",
                             "events", "warnings", "outputs", "broadcasts"}  # fmt: skip
    assert document["broadcasts"][0]["ranks"][1]["site"] == "s.py:3"
    assert document["summary"] == "ok: 1 collective (1 broadcast compared) checked on 2 ranks"


def test_records_round_trip_and_a_torn_last_line_is_dropped(tmp_path):
    event = leave(0, 0, watched=(("x", "ab"),))
    protocol.record_path(tmp_path, 0).write_text(protocol.encode(event) + "\n" + '{"kind": "ent')
    assert protocol.read_events(tmp_path, 0) == (event,)


def test_a_script_without_collectives_is_unverified_not_ok():
    never = judge(run([finished(0, initialized=False)], [finished(1, initialized=False)]))
    assert never.outcome == UNVERIFIED and not never.ok
    assert never.details == ("the script never initialised torch.distributed, so nothing was verified: no collective ran",)
    idle = judge(run([finished(0)], [finished(1)]))
    assert idle.outcome == UNVERIFIED
    assert "initialised torch.distributed but called no collective" in idle.details[0]
    assert idle.as_dict()["verified"] is False


def test_an_ok_says_how_many_collectives_were_checked_on_how_many_ranks():
    barrier = Event(protocol.ENTER, 0, 1.0, call=1, family=OTHER_COLLECTIVE, op="torch.distributed.barrier", site="s.py:5")
    ranks = [[enter(r, 0), leave(r, 0), barrier.__class__(**{**barrier.__dict__, "rank": r}), finished(r)] for r in (0, 1, 2)]
    result = judge(run(*ranks))
    assert result.summary == "ok: 2 collectives (1 broadcast compared) checked on 3 ranks"


TRACEBACK = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/venv/lib/python3.11/site-packages/bcast_lint/harness/bootstrap.py", line 559, in main
[rank1]:     namespace = run_script(script, argv[1:], recorder)
[rank1]:                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
[rank1]:   File "<frozen runpy>", line 291, in run_path
[rank1]:   File "/home/me/train.py", line 12, in main
[rank1]:     print(weights.norm())
[rank1]: AttributeError: 'NoneType' object has no attribute 'norm'
"""


def test_an_error_shows_the_failing_ranks_own_traceback_without_the_harness_frames():
    assert own_output(TRACEBACK).splitlines() == [
        "Traceback (most recent call last):",
        '  File "/home/me/train.py", line 12, in main',
        "    print(weights.norm())",
        "AttributeError: 'NoneType' object has no attribute 'norm'",
    ]
    failure = Event(protocol.SCRIPT_ERROR, 1, 2.0, error="AttributeError: 'NoneType' object has no attribute 'norm'",
                    site="train.py:12")  # fmt: skip
    result = judge(run([finished(0)], [failure], stderr=[(1, TRACEBACK)]))
    assert result.outputs == ((1, own_output(TRACEBACK)),)
    assert "rank 1's output (last lines):\n    | Traceback" in render_text_of(result)


def render_text_of(result):
    from bcast_lint.harness.report import render_text

    return render_text(result, "train.py")


# Fingerprints: "z" an all-zero placeholder, "d"/"e" data.
def _overwrite_run(*ranks, src=0, nodes=None):
    """ranks: (before, blank, after) per rank."""
    events = []
    for rank, (before, blank, after) in enumerate(ranks):
        start = Event(protocol.START, rank, 0.5, local_rank=rank % 2 if nodes else rank, node=rank // 2 if nodes else 0)
        events.append([start, blank_enter(rank, 0, before, blank, src), leave(rank, 0, after), finished(rank)])
    return judge(run(*events))


def test_data_on_a_rank_other_than_the_source_overwritten_by_its_placeholder_is_divergent():
    result = _overwrite_run(("z", True, "z"), ("d", False, "z"))  # if rank == 1: t.fill_(0.75); src=0
    assert result.outcome == DIVERGENT
    assert result.details[0].startswith(
        "rank 1's value was overwritten by rank 0's placeholder: is rank 1 meant to be the source?")
    assert result.events[0].sites == ("s.py:3",)


def test_a_value_filled_per_node_and_broadcast_from_rank_0_is_divergent():
    # is_local_main_process on 2 nodes: ranks 0 and 2 fill, 1 and 3 hold placeholders
    result = _overwrite_run(("d", False, "d"), ("z", True, "d"), ("e", False, "d"), ("z", True, "d"), nodes=2)
    assert result.outcome == DIVERGENT
    assert result.details[0].startswith(
        "rank 2's value was overwritten by rank 0's: ranks 0 and 2 (the local main process of each node) held "
        "values of their own while ranks 1 and 3 held placeholders")


@pytest.mark.parametrize("ranks", [
    pytest.param([("d", False, "d"), ("z", True, "d")], id="receivers-allocate-zeros"),
    pytest.param([("d", False, "d"), ("d", False, "d")], id="every-rank-computes-the-same"),
    pytest.param([("d", False, "d"), ("e", False, "d")], id="every-rank-draws-a-seed-rank-0-wins"),
    pytest.param([("z", True, "z"), ("z", True, "z")], id="zeros-everywhere"),
])  # fmt: skip
def test_legitimate_broadcasts_are_not_overwrites(ranks):
    assert _overwrite_run(*ranks).outcome == OK


def test_the_static_findings_are_tied_to_the_runtime_events():
    from bcast_lint.harness.link import Script, ties
    from bcast_lint.model import Finding

    source = (
        b"import torch\n"  # 1
        b"def main():\n"  # 2
        b"    buf = torch.zeros(1)\n"  # 3: flagged, leads to the broadcast at 5
        b"    dist.barrier()\n"  # 4
        b"    dist.broadcast(buf, 0)\n"  # 5
        b"    pass\n"  # 6
        b"    x = dist.broadcast(buf, 0)\n"  # 7: flagged
        b"    x.norm()\n"  # 8: fails, one line after the broadcast
        b"    total = torch.empty(3)\n"  # 9: flagged, assigns a --check name
        b"    y = torch.ones(1)\n"  # 10: flagged, nothing happened here
        b"z = torch.ones(1)\n"  # 11: module level, flagged: the broadcasts in main() are not its
    )
    script = Script.parse("t.py", source)
    findings = tuple(Finding(code, "m", "t.py", line, 5, line, 9) for code, line in
                     (("BCL007", 3), ("BCL003", 9), ("BCL006", 7), ("BCL004", 10), ("BCL008", 1)))  # fmt: skip
    from bcast_lint.harness.report import RuntimeEvent, VerifyResult

    events = (
        RuntimeEvent("divergent at 5", ("t.py:5",), ("t.py:5",)),
        RuntimeEvent("end: total differs", names=("total",)),
        RuntimeEvent("AttributeError at 8", ("t.py:8",), ("t.py:7",)),
        RuntimeEvent("waiting elsewhere", ("other.py:3",), ("other.py:3",)),
    )
    tied = ties(findings, VerifyResult(ERROR, events), script)
    assert tied == ((0,), (1,), (2,), (), ())


def test_a_finding_moves_with_the_lines_the_fix_inserts():
    from bcast_lint.harness.link import moved
    from bcast_lint.model import Finding

    original = b"a\nb\nc = None\nbroadcast(c)\n"
    fixed = b"a\nb\nc = torch.zeros(1)\nif x:\n    pass\nbroadcast(c)\n"
    finding = Finding("BCL001", "m", "t.py", 4, 1, 4, 12)
    assert (moved(finding, original, fixed, "t.py (fixed)").line, moved(finding, original, fixed, "t").filename) == (6, "t")


def test_fixed_findings_are_those_whose_code_and_message_no_longer_occur():
    from bcast_lint.harness.verdict import _fixed_flags
    from bcast_lint.model import SAFE, Edit, Finding, Fix

    fix = Fix(SAFE, "f", (Edit(1, 1, 1, 1, ""),))
    first, second = (Finding("BCL001", "x is None", "t.py", line, 1, line, 2, fix) for line in (3, 9))
    unfixable = Finding("BCL006", "y", "t.py", 5, 1, 5, 2)
    assert _fixed_flags((first, unfixable, second), (unfixable,)) == [True, False, True]
    assert _fixed_flags((first, second), (second,)).count(True) == 1  # which one, positions cannot tell


def test_verify_fix_succeeds_only_when_the_fixed_copy_and_every_fixed_finding_are_ok():
    from bcast_lint.harness.report import RuntimeEvent, VerifyResult
    from bcast_lint.harness.verdict import FixProof, link, _proofs
    from bcast_lint.model import SAFE, UNSAFE, Edit, Finding, Fix

    source = b"import torch\nx = None\nbroadcast(x)\ny = dist.broadcast(y, 0)\n"
    edit = (Edit(2, 5, 2, 9, "torch.zeros(1)"),)
    fixable = Finding("BCL001", "x is None", "t.py", 3, 1, 3, 13, Fix(SAFE, "allocate", edit))
    unsafe = Finding("BCL004", "cuda:0", "t.py", 2, 1, 2, 5, Fix(UNSAFE, "device", edit))
    unfixable = Finding("BCL006", "None result", "t.py", 4, 1, 4, 20)
    findings = (fixable, unsafe, unfixable)
    failed = VerifyResult(ERROR, (RuntimeEvent("rank 1: TypeError at t.py:3", ("t.py:3",), ("t.py:3",)),))
    original = link("t.py", source, findings, failed)
    every_line = tuple(f"t.py (fixed):{line}" for line in range(1, 5))
    ok_copy = link("t.py (fixed)", source, findings, VerifyResult(OK, ranks=(), reached=every_line))
    proofs = _proofs(original, findings, [True, False, False], False, ok_copy)
    assert [(p.fixed, p.original, p.reason) for p in proofs] == [
        (True, ("rank 1: TypeError at t.py:3",), ""),
        (False, ("rank 1: TypeError at t.py:3",), "its fix is unsafe; --unsafe-fixes applies it"),  # leads to line 3
        (False, (), "the rule has no automatic fix for it; see `bcast-lint rule BCL006`"),
    ]
    assert FixProof(original, ok_copy, proofs).ok
    still = VerifyResult(ERROR, (RuntimeEvent("rank 0: TypeError at t.py (fixed):3", ("t.py (fixed):3",)),),
                         reached=every_line)
    failing_copy = link("t.py (fixed)", source, findings, still)
    proofs = _proofs(original, findings, [True, False, False], False, failing_copy)
    assert proofs[0].after == ("rank 0: TypeError at t.py (fixed):3",)
    proof = FixProof(original, failing_copy, proofs)
    assert not proof.ok
    text = proof.render_text()
    assert "    fixed copy:   still fails here: rank 0: TypeError at t.py (fixed):3" in text
    assert "    not fixed: its fix is unsafe; --unsafe-fixes applies it" in text
    assert FixProof(original, None, proofs).ok is False  # nothing fixed: the copy is the failing original


HANGS_FIRST = b"""\
import torch
import torch.distributed as dist
x = torch.ones(1)
dist.broadcast(x, src=dist.get_rank())
y = dist.broadcast(x, 0)
"""


def _hung_copy(reached_lines, outcome=HANG):
    """verify --fix on HANGS_FIRST, where BCL006 at line 5 is fixed and the fixed copy's ranks
    ran `reached_lines`; the copy ended `outcome`, with a rank waiting at line 4."""
    from bcast_lint.harness.report import RuntimeEvent, VerifyResult
    from bcast_lint.harness.verdict import FixProof, _proofs, link
    from bcast_lint.model import SAFE, Edit, Fix, Finding

    bcl006 = Finding("BCL006", "None result", "t.py", 5, 1, 5, 24, Fix(SAFE, "drop", (Edit(5, 1, 5, 5, ""),)))
    waiting = (RuntimeEvent("rank 0: waiting in torch.distributed.broadcast at t.py (fixed):4",
                            ("t.py (fixed):4",), ("t.py (fixed):4",)),) if outcome == HANG else ()  # fmt: skip
    original = link("t.py", HANGS_FIRST, (bcl006,), VerifyResult(HANG, waiting, reached=("t.py:3", "t.py:4")))
    copy = link("t.py (fixed)", HANGS_FIRST, (bcl006,),
                VerifyResult(outcome, waiting, reached=tuple(f"t.py (fixed):{n}" for n in reached_lines)))
    proof = FixProof(original, copy, _proofs(original, (bcl006,), [True], False, copy))
    return proof, proof.proofs[0]


def test_a_fixed_finding_whose_line_the_hung_copy_never_reached_is_not_reached_never_ok():
    proof, bcl006 = _hung_copy([1, 2, 3, 4])
    assert not bcl006.fixed_ok and not proof.ok
    text = proof.render_text()
    assert "ok here" not in text
    assert "    original run: not reached: no rank ran this line" in text
    assert "    fixed copy:   not reached: no rank ran this line (the fixed copy: hang)" in text
    assert proof.as_dict()["findings"][0]["fixed_ok"] is False


def test_a_fixed_copy_that_fails_is_ok_at_no_finding_even_one_it_ran():
    proof, bcl006 = _hung_copy([1, 2, 3, 4, 5], outcome=ERROR)
    assert not bcl006.fixed_ok and not proof.ok
    assert "    fixed copy:   ran here, not proven: the fixed copy as a whole ended error" in proof.render_text()
    proof, bcl006 = _hung_copy([1, 2, 3, 4, 5], outcome=OK)
    assert bcl006.fixed_ok and proof.ok and "    fixed copy:   ok here" in proof.render_text()
    proof, bcl006 = _hung_copy([1, 2, 3, 4], outcome=OK)  # ok, but line 5 never ran: nothing proven there
    assert not bcl006.fixed_ok and not proof.ok


def test_a_finding_is_reached_through_any_line_of_its_range_or_its_statements_first_line():
    from bcast_lint.harness.link import Script
    from bcast_lint.model import Finding

    script = Script.parse("t.py", b"x = f(\n    a,\n    b)\nif x:\n    g(x)\n")
    argument = Finding("BCL001", "m", "t.py", 3, 5, 3, 6)
    assert script.reached(argument, {1}) and script.reached(argument, {3}) and not script.reached(argument, {4})
    body = Finding("BCL005", "m", "t.py", 5, 5, 5, 9)
    assert not script.reached(body, {1, 4}) and script.reached(body, {5})


def test_the_fixed_copy_lies_beside_the_script_or_elsewhere_when_that_is_read_only(tmp_path, monkeypatch):
    import tempfile

    from bcast_lint.harness.verdict import _temporary_copy

    script = tmp_path / "train.py"
    script.write_text("x = 1\n")
    with _temporary_copy(str(script), b"x = 2\n") as copy:
        assert Path(copy).parent == tmp_path and Path(copy).read_bytes() == b"x = 2\n"
    assert sorted(tmp_path.iterdir()) == [script]

    def read_only(*args, dir=None, **kwargs):  # as mkstemp fails in a directory one cannot write
        raise PermissionError(13, "Permission denied", dir)

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with _temporary_copy(str(script), b"x = 2\n") as copy:
        assert Path(copy).parent != tmp_path and Path(copy).name == "train.py"
    assert not Path(copy).exists()


def test_two_simulated_nodes_start_one_agent_per_node_on_one_rendezvous():
    from bcast_lint.harness.launcher import torchrun_command

    commands = [torchrun_command("t.py", 2, 29400, ("--lr", "1"), nnodes=2, node=node) for node in (0, 1)]
    for node, command in enumerate(commands):
        joined = " ".join(command)
        assert f"--nnodes 2 --node-rank {node} --master-addr 127.0.0.1 --master-port 29400" in joined
        assert joined.endswith("-m bcast_lint.harness.bootstrap t.py --lr 1")
    assert "--rdzv-endpoint 127.0.0.1:29400" in " ".join(torchrun_command("t.py", 2, 29400, ()))


def test_verify_without_the_harness_extra_names_the_install_command(tmp_path):
    """A fresh process where torch, accelerate and psutil cannot be imported: `--help` works,
    `verify SCRIPT` prints one line naming the extra and exits 2, blaming nothing in the script.
    The command names where this bcast-lint was installed from (not a package index: there is
    no release on one), on a line of its own in `--help` so it can be copied whole."""
    import subprocess
    import sys

    from bcast_lint.harness.install import install_command

    command = install_command()
    assert command.startswith("pip install ") and command != "pip install 'bcast-lint[harness]'"
    script = tmp_path / "train.py"
    script.write_text("import torch\n")
    hide = "import sys; sys.modules.update(torch=None, accelerate=None, psutil=None); from bcast_lint.cli import main; "
    helped = subprocess.run([sys.executable, "-c", hide + "sys.exit(main(['verify', '--help']))"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    assert helped.returncode == 0 and f"\n  {command}\n" in helped.stdout, helped.stdout + helped.stderr
    ran = subprocess.run([sys.executable, "-c", hide + f"sys.exit(main(['verify', {str(script)!r}]))"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 2
    assert ran.stdout == ""
    assert ran.stderr.splitlines() == [
        f"bcast-lint verify: needs torch, accelerate, psutil, not installed here; install the harness extra: {command}"
    ]


@pytest.mark.parametrize("origin, command", [
    pytest.param({"url": "file:///home/me/bcast-lint", "dir_info": {}},
                 "pip install '/home/me/bcast-lint[harness]'", id="a-clone"),
    pytest.param({"url": "file:///home/me/my%20tools/bcast-lint", "dir_info": {"editable": True}},
                 "pip install -e '/home/me/my tools/bcast-lint[harness]'", id="an-editable-clone-with-a-space"),
    pytest.param({"url": "https://git.example/team/bcast-lint.git",
                  "vcs_info": {"vcs": "git", "commit_id": "0123abc", "requested_revision": "main"}},
                 "pip install 'bcast-lint[harness] @ git+https://git.example/team/bcast-lint.git@main'",
                 id="a-git-url"),
    pytest.param({"url": "https://git.example/bcast-lint.git", "vcs_info": {"vcs": "git", "commit_id": "0123abc"}},
                 "pip install 'bcast-lint[harness] @ git+https://git.example/bcast-lint.git@0123abc'",
                 id="a-git-url-at-a-commit"),
    pytest.param({"url": "file:///tmp/dist/bcast_lint-0.1.0-py3-none-any.whl", "archive_info": {}},
                 "pip install 'bcast-lint[harness] @ file:///tmp/dist/bcast_lint-0.1.0-py3-none-any.whl'",
                 id="a-wheel"),
])  # fmt: skip
def test_the_install_command_names_where_bcast_lint_came_from(origin, command):
    from bcast_lint.harness.install import from_direct_url

    assert from_direct_url(origin) == command


def _requirements(extra: str) -> dict:
    from packaging.requirements import Requirement

    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib

    project = tomllib.loads((FIXTURES.parent / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(text) for text in project["optional-dependencies"][extra]]
    return {requirement.name: requirement.specifier for requirement in requirements}


def test_the_harness_extra_keeps_a_users_torch_and_the_test_install_pins_the_cpu_build():
    """`[harness]` goes into an existing training environment: ranges keep the torch and
    accelerate there. The test install pins the CPU build these machines carry (a bare torch
    requirement downloads a multi-GB CUDA build)."""
    harness, test = _requirements("harness"), _requirements("test")
    for name, versions in (("torch", ("2.4.0", "2.12.1", "2.13.0", "2.14.1")),
                           ("accelerate", ("1.0.0", "1.14.0", "1.15.0", "1.16.0"))):  # fmt: skip
        assert not any(spec.operator in ("==", "===") for spec in harness[name]), harness[name]
        assert all(harness[name].contains(version) for version in versions), (name, harness[name])
        assert not harness[name].contains("3.0.0")
    assert str(test["torch"]) == "==2.13.0" and str(test["accelerate"]) == "==1.15.0"
    assert "psutil" in harness


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["missing.py"],
        [__file__, "--nproc", "1"],
        [__file__, "--timeout", "0"],
        [__file__, "--output-format", "xml"],
        [__file__, "--nnodes", "0"],
        [__file__, "--unsafe-fixes"],
        [__file__, "--nproc", "2,1"],
        [__file__, "--nproc", "2,x"],
        [__file__, "--nproc", "0"],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert verify_main(argv) == 2


def test_several_world_sizes_say_which_sizes_fail():
    from bcast_lint.harness.verdict import WorldSizes, link

    def linked(outcome):
        return link("t.py", b"", (), judge(run(*outcome)))

    ok = [[enter(r, 0), leave(r, 0), finished(r)] for r in (0, 1)]
    uneven = [[enter(0, 0), leave(0, 0), enter(0, 1), leave(0, 1), finished(0)],
              [enter(1, 0), leave(1, 0), finished(1)], [enter(2, 0), leave(2, 0), finished(2)]]  # fmt: skip
    sizes = WorldSizes(1, ((2, linked(ok)), (3, linked(uneven))))
    assert not sizes.ok and sizes.failing == (3,)
    text = sizes.render_text()
    assert text.startswith("== world size 2 ==\nt.py: ok: 1 collective")
    assert "\n== world size 3 ==\nt.py: divergent\n" in text
    assert text.endswith("world size 2: ok\nworld size 3: divergent\nfails at world size 3")
    document = sizes.as_dict()
    assert document["failing_world_sizes"] == [3]
    assert [(size["world_size"], size["ok"]) for size in document["world_sizes"]] == [(2, True), (3, False)]
    assert WorldSizes(2, ((2, linked(ok)),)).render_text().startswith("== world size 4 (2 nodes of 2) ==")


# ---------------------------------------------------------------- the bootstrap's helpers


def test_fingerprints_tell_dtype_and_shape_apart_and_ignore_set_order():
    torch = pytest.importorskip("torch")
    from bcast_lint.harness.bootstrap import fingerprint

    ints = torch.arange(4, dtype=torch.int64)
    assert fingerprint(ints) == fingerprint(ints.clone())
    assert fingerprint(ints) != fingerprint(ints.view(torch.float64))  # same bytes, other dtype
    assert fingerprint(ints) != fingerprint(ints.reshape(2, 2))
    assert fingerprint({"a", "b", "c"}) == fingerprint({"c", "b", "a"})


@pytest.mark.parametrize("positions", [True, False], ids=["co_positions", "line-only"])
def test_watched_names_come_from_the_call_site(positions, monkeypatch):
    """With instruction positions (Python 3.11+) and without them (3.9, 3.10: the line alone)."""
    torch = pytest.importorskip("torch")
    import sys

    from bcast_lint.harness import bootstrap
    from bcast_lint.harness.bootstrap import watched_names

    if positions and not bootstrap.HAS_POSITIONS:
        pytest.skip("this Python has no co_positions")
    monkeypatch.setattr(bootstrap, "HAS_POSITIONS", positions)

    seen = []

    def broadcast(*args, **kwargs):
        seen.append(watched_names(sys._getframe(1)))
        return args[0] if args else kwargs["object_list"]

    x, cfg = torch.zeros(2, 2), {"lr": 0.1}
    broadcast(x.clone())
    broadcast(x.t().contiguous(), 0)
    broadcast([cfg, x], 0)
    broadcast(object_list=[cfg])
    broadcast(x)  # the variable itself: its own fingerprint covers it
    broadcast(x[0])  # a row: the rest of x may legitimately differ per rank
    cfg = broadcast([cfg])[0]  # the value reaches cfg through the result, after the call
    assert seen == [("x",), ("x",), ("cfg", "x"), ("cfg",), (), (), ()]


# ---------------------------------------------------------------- real runs


def _runtime_programs() -> list[Path]:
    derived = (".fixed.py", ".handfixed.py")
    return sorted(p for p in FIXTURES.glob("*/runtime_*.py") if not p.name.endswith(derived))


def _header(program: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    match = HEADER.match(program.read_text().splitlines()[0])
    assert match, f"{program} must start with `# verify: <outcome> [check=names] [nnodes=N] [nproc=N,N] [needs=module] [timeout=S]`"
    options = dict(option.split("=", 1) for option in match.group(2).split())
    assert set(options) <= {"check", "nnodes", "nproc", "needs", "timeout"}, options
    outcomes = tuple(match.group(1).split(","))
    assert set(outcomes) <= set(OUTCOMES), outcomes
    return outcomes, options


def _runs(program: Path) -> list[tuple[str, "RunOptions"]]:
    """(expected outcome, how to run it) for each world size the header names."""
    from bcast_lint.harness.verdict import RunOptions

    outcomes, options = _header(program)
    sizes = [int(size) for size in options.get("nproc", "2").split(",")]
    if len(outcomes) == 1:
        outcomes *= len(sizes)
    assert len(outcomes) == len(sizes), f"{program}: one outcome for every size, or one per size"
    check = tuple(options["check"].split(",")) if "check" in options else ()
    return [(outcome, RunOptions(nproc=size, nnodes=int(options.get("nnodes", 1)),
                                 timeout=_timeout(outcome, options), check=check))
            for outcome, size in zip(outcomes, sizes)]  # fmt: skip


def _timeout(outcome: str, options: dict[str, str]) -> float:
    if "timeout" in options:
        return float(options["timeout"])
    return HANG_TIMEOUT if outcome == HANG else 60.0


def _expected_codes(program: Path) -> set[str]:
    lines = program.with_suffix(".expected").read_text().splitlines()
    return {line.split()[1] for line in lines if line.strip()}


def _tied_codes(linked) -> set[str]:
    return {finding["code"] for event in linked.as_dict()["events"] for finding in event["findings"]}


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _auto_fixed(program: Path) -> bool:
    outcome = fix_source(program.read_bytes(), str(program), lambda code: True, unsafe=True)
    return outcome.source != program.read_bytes()


def _assert_every_rank_agrees(result, options) -> None:
    assert result.outcome == OK, result.details
    assert result.collectives, "the corrected program still runs its collectives"
    for broadcast in result.broadcasts:
        assert broadcast.agree
        assert len({call.value for call in broadcast.calls}) == 1
        assert len(broadcast.calls) == options.nproc * options.nnodes
    # the simulated topology: LOCAL_RANK 0..nproc-1 on each node, one local main process per node
    assert [(rank.rank, rank.local_rank, rank.node) for rank in result.ranks] == [
        (node * options.nproc + local, local, node) for node in range(options.nnodes) for local in range(options.nproc)
    ]


@pytest.mark.runtime
@pytest.mark.timeout(600)
@pytest.mark.parametrize("program", _runtime_programs(), ids=_id)
def test_runtime_fixture_fails_as_its_header_says_predicted_by_its_finding_and_its_fix_is_ok(program, tmp_path):
    """At each world size its header names, the broken program has the outcome the header gives
    for that size, tied in the JSON to the codes of its `.expected` where it fails; `verify --fix
    --unsafe-fixes` proves the automatic fix (the original failing at each fixed finding, the fixed
    copy ok), or the hand-fixed version is ok."""
    _require(_header(program)[1].get("needs"))
    for outcome, options in _runs(program):
        _check_at_one_size(program, outcome, options)
    assert not _processes_running(program), "the job left processes behind"


def _check_at_one_size(program: Path, outcome: str, options) -> None:
    from bcast_lint.harness.verdict import verify_fix, verify_script

    if outcome == OK:  # a correct program (a look-alike), or a bug this size does not show
        original = verify_script(str(program), options)
        _assert_every_rank_agrees(original.result, options)
    elif _auto_fixed(program):
        proof = verify_fix(str(program), options, unsafe=True)
        original = proof.original
        assert proof.ok, proof.render_text()
        assert proof.fixed is not None
        _assert_every_rank_agrees(proof.fixed.result, options)
        for finding in proof.proofs:
            assert not finding.fixed or finding.original, f"{finding.finding.code} fixed but not seen failing"
    else:
        original = verify_script(str(program), options)
        corrected = program.with_name(program.stem + ".handfixed.py")
        fixed = verify(str(corrected), options.nproc, 60.0, (), options.check, options.nnodes)
        _assert_every_rank_agrees(fixed, options)
    size = f"world size {options.nproc * options.nnodes}"
    assert original.result.outcome == outcome, (size, original.result.details)
    assert bool(original.result.details) == (original.result.outcome != OK)
    expected = _expected_codes(program) if outcome != OK else set()
    assert _tied_codes(original) == expected, (size, original.render_text())


def _require(framework: str | None) -> None:
    """Skip without the framework (an environment installed before the test extra named it)."""
    if framework is None:
        return
    pytest.importorskip(framework)
    if framework == "deepspeed":
        _build_deepspeed_comm_op()


@functools.lru_cache(maxsize=None)
def _build_deepspeed_comm_op() -> None:
    """DeepSpeed's CPU backend JIT-compiles its shared-memory op on first use (3.5 min on 2 cores,
    then cached in ~/.cache/torch_extensions): build it here, outside the job's hang timeout."""
    code = "from deepspeed.comm.torch import build_shm_op; build_shm_op()"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=400,
                   env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})


def _copy_of(fixture: Path, directory: Path) -> Path:
    """A runtime fixture under another path: the fixture's own test may run it at the same time
    (pytest-xdist) and looks for processes left behind by its path."""
    copy = directory / fixture.name
    copy.write_bytes(fixture.read_bytes())
    return copy


def _processes_running(program: Path) -> list:
    psutil = pytest.importorskip("psutil")
    running = []
    for process in psutil.process_iter(["cmdline"]):
        if str(program) in " ".join(process.info["cmdline"] or ()):
            running.append(process)
    return running


@pytest.mark.runtime
@pytest.mark.timeout(200)
def test_verify_fix_on_the_readme_training_loop_proves_both_fixes_and_leaves_the_script_alone(tmp_path, capsys):
    """The README's example: BCL001 fails the original run at its line, BCL005 is masked by it;
    with --unsafe-fixes both are fixed in a temporary copy that runs ok (BCL011's strided loop,
    which has no fix, is even on 2 ranks); the script is unchanged and no copy is left beside it."""
    script = tmp_path / "train.py"
    script.write_bytes((FIXTURES / "BCL001" / "train_loop.py").read_bytes())
    before = script.read_bytes()
    assert verify_main(["--fix", "--unsafe-fixes", "--output-format", "json", str(script)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert script.read_bytes() == before and sorted(tmp_path.iterdir()) == [script]
    assert document["ok"] and document["fixed"] == 2
    assert document["fixed_copy"]["outcome"] == OK
    bcl001, bcl011, bcl005 = document["findings"]
    assert (bcl001["code"], bcl001["line"], bcl001["fixed_ok"]) == ("BCL001", 15, True)
    assert (bcl011["code"], bcl011["line"]) == ("BCL011", 32)  # no fix: uneven over 3 ranks, not over 2
    assert bcl001["original_events"][0].endswith(f"at {script}:15 (in accelerate.utils.broadcast)")
    assert (bcl005["code"], bcl005["fixed_ok"], bcl005["observed"]) == ("BCL005", True, False)
    assert document["original"]["events"][0]["findings"] == [{"code": "BCL001", "line": 15, "column": 11}]


FIRST_COLLECTIVE_HANGS = """\
\"\"\"Every rank names itself as the source of its first broadcast: the job hangs there, before the
weights are shared.\"\"\"
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    seed = torch.tensor([rank])
    dist.broadcast(seed, src=rank)
    torch.manual_seed(int(seed.item()))
    weights = torch.zeros(4)
    if rank == 0:
        weights = torch.randn(4)
    weights = dist.broadcast(weights, src=0)
    print(weights.norm())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


@pytest.mark.runtime
@pytest.mark.timeout(200)
def test_verify_fix_where_the_first_collective_hangs_says_the_fixed_line_was_not_reached(tmp_path):
    """BCL009 (no fix) hangs line 11 in the original and in the fixed copy; BCL006 at line 16 is
    fixed but never ran in either: "not reached", never "ok here", and the proof fails."""
    from bcast_lint.harness.verdict import RunOptions, verify_fix

    script = tmp_path / "train.py"
    script.write_text(FIRST_COLLECTIVE_HANGS)
    proof = verify_fix(str(script), RunOptions(timeout=HANG_TIMEOUT), unsafe=False)
    assert proof.fixed is not None and proof.fixed.result.outcome == HANG
    bcl009, bcl006 = proof.proofs
    assert (bcl009.finding.code, bcl009.fixed, bcl009.reached) == ("BCL009", False, True)
    assert (bcl006.finding.code, bcl006.finding.line, bcl006.fixed) == ("BCL006", 16, True)
    assert not bcl006.reached and not bcl006.fixed_reached and not bcl006.fixed_ok
    assert not proof.ok
    text = proof.render_text()
    assert "ok here" not in text, text
    assert "    fixed copy:   not reached: no rank ran this line (the fixed copy: hang)" in text
    assert proof.as_dict()["findings"][1]["fixed_ok"] is False


@pytest.mark.runtime
@pytest.mark.timeout(200)
def test_verify_at_two_world_sizes_finds_the_bug_only_the_odd_one_shows(tmp_path, capsys):
    """Four shards split evenly over 2 ranks and not over 3: `--nproc 2,3` runs both and says
    that size 3 fails."""
    program = _copy_of(FIXTURES / "BCL005" / "runtime_rounds_even_at_two.py", tmp_path)
    assert verify_main([str(program), "--nproc", "2,3"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"== world size 2 ==\n{program}: ok: 2 collectives"), out
    assert f"\n== world size 3 ==\n{program}: error\n" in out
    assert "    predicted by BCL005 at" in out.split("== world size 3 ==")[1]
    assert out.endswith("world size 2: ok\nworld size 3: error\nfails at world size 3\n"), out


@pytest.mark.runtime
@pytest.mark.timeout(120)
def test_cli_prints_json_and_exits_1_for_a_broken_program(tmp_path, capsys):
    program = _copy_of(FIXTURES / "BCL006" / "runtime_weights_result.py", tmp_path)
    assert verify_main([str(program), "--output-format", "json", "--timeout", "60"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["outcome"] == ERROR
    # A rank may also abort at exit ("terminate called without an active exception", FACTS.md):
    # the failure is the rank whose detail names the AttributeError, whatever the order.
    failing = [d for d in document["details"] if "AttributeError: 'NoneType' object has no attribute 'norm'" in d]
    assert failing, document["details"]
    first = document["events"][0]
    assert first["sites"] == [f"{program}:12"] and first["collectives"] == [f"{program}:11"]
    assert first["static"] == "predicted"
    assert [(f["code"], f["line"]) for f in first["findings"]] == [("BCL006", 11)]
    assert [(f["code"], f["observed"], f["events"]) for f in document["findings"]] == [("BCL006", True, [0, 1])]
    first_rank = failing[0].split(":")[0].split()[1]  # "rank 1: AttributeError ..."
    assert first_rank in document["outputs"]
    # gloo's threads may print a C++ "terminate called ..." after the traceback as the job is torn down.
    traceback = [line for line in document["outputs"][first_rank].splitlines() if not line.startswith("terminate called")]
    assert traceback[-1] == "AttributeError: 'NoneType' object has no attribute 'norm'"
    assert not any("bcast_lint/harness" in line for line in traceback)


@pytest.mark.runtime
@pytest.mark.timeout(120)
def test_a_script_that_never_goes_distributed_is_unverified_and_exits_1(tmp_path, capsys):
    program = tmp_path / "single.py"
    program.write_text("import torch\nprint(torch.ones(2).sum())\n")
    assert verify_main([str(program)]) == 1
    assert capsys.readouterr().out.splitlines()[:2] == [
        f"{program}: unverified",
        "  the script never initialised torch.distributed, so nothing was verified: no collective ran",
    ]


@pytest.mark.runtime
@pytest.mark.timeout(120)
def test_check_names_and_script_arguments_reach_the_ranks(tmp_path):
    program = tmp_path / "per_rank.py"
    program.write_text(
        "import sys\n"
        "import torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "label = sys.argv[1] + str(dist.get_rank())\n"
        "shared = sys.argv[1]\n"
        "dist.destroy_process_group()\n"
    )
    assert verify(str(program), script_args=("run",), check=("shared",)).outcome == OK
    result = verify(str(program), script_args=("run",), check=("shared", "label"))
    assert result.outcome == DIVERGENT
    assert result.details == ("at the end of the script the ranks hold different values for `label`",)


@pytest.mark.runtime
@pytest.mark.timeout(120)
def test_partial_state_runs_distributed_on_cpu(tmp_path):
    # PartialState() ignores ACCELERATE_USE_CPU; the bootstrap defaults it to cpu=True.
    program = tmp_path / "partial_state.py"
    program.write_text(
        "import torch\n"
        "from accelerate import PartialState\n"
        "from accelerate.utils import broadcast\n"
        "state = PartialState()\n"
        "assert state.num_processes == 2, state.distributed_type\n"
        "value = torch.tensor([7]) if state.is_main_process else torch.zeros(1, dtype=torch.int64)\n"
        "value = broadcast(value)\n"
        "assert value.item() == 7\n"
    )
    result = verify(str(program))
    assert result.outcome == OK, result.details
    assert [call.site for call in result.broadcasts[0].calls] == [f"{program}:7", f"{program}:7"]
    # accelerate set the process group up and owns its teardown: nothing to tell the script's author
    assert result.warnings == ()


@pytest.mark.runtime
@pytest.mark.timeout(120)
def test_a_plain_accelerate_script_verifies_without_a_destroy_process_group_warning(tmp_path, capsys):
    program = tmp_path / "train.py"
    program.write_text(
        "import torch\n"
        "from accelerate import Accelerator\n"
        "from accelerate.utils import broadcast\n"
        "accelerator = Accelerator()\n"
        "value = torch.tensor([7]) if accelerator.is_main_process else torch.zeros(1, dtype=torch.int64)\n"
        "value = broadcast(value)\n"
    )
    assert verify_main([str(program)]) == 0
    out = capsys.readouterr().out
    assert out == f"{program}: ok: 1 collective (1 broadcast compared) checked on 2 ranks\n", out

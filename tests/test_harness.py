"""The runtime harness: the report's verdicts on synthetic records, and real runs of the
runtime fixtures (`fixtures/<CODE>/runtime_*.py`, whose first line says `# verify: <outcome>`).

The runtime tests start real torchrun jobs (about 7 s each on 2 cores); select or skip them with
`-m runtime` / `-m "not runtime"`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bcast_lint.fixer import fix_source

from bcast_lint.harness import protocol, verify
from bcast_lint.harness.command import main as verify_main
from bcast_lint.harness.protocol import BROADCAST, OTHER_COLLECTIVE, Event, RankLog, Run
from bcast_lint.harness.report import DIVERGENT, ERROR, HANG, OK, OUTCOMES, judge

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# `# verify: <outcome> [check=name,name]`: the outcome of the broken program, and module-level
# names whose final values must agree across ranks (garbage that never passes a broadcast).
HEADER = re.compile(r"#\s*verify:\s*(\w+)(?:\s+check=([\w,]+))?")
HANG_TIMEOUT = 20.0  # seconds: startup takes ~7 s on 2 cores, so a hang shows well before this


# ---------------------------------------------------------------- synthetic records


def enter(rank, call, site="s.py:3", arg="Tensor(shape=(4,))", op="torch.distributed.broadcast", t=1.0):
    return Event(protocol.ENTER, rank, t, call=call, family=BROADCAST, op=op, site=site, arg=arg)


def leave(rank, call, value="v", watched=(), error=None, site="s.py:3", t=2.0):
    return Event(
        protocol.EXIT, rank, t, call=call, family=BROADCAST, op="torch.distributed.broadcast", site=site,
        value=None if error else value, result=None if error else "none", watched=watched, error=error,
    )  # fmt: skip


def finished(rank, watched=(), destroyed=False):
    return Event(protocol.FINISHED, rank, 3.0, watched=watched, destroyed=destroyed)


def run(*events_per_rank, timed_out=False, fatal=(), stderr=()):
    ranks = tuple(
        RankLog(rank, tuple(events), dict(fatal).get(rank, ""), dict(stderr).get(rank, ""))
        for rank, events in enumerate(events_per_rank)
    )
    return Run(len(ranks), timed_out, None if timed_out else 0, ranks)


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
    result = judge(run([finished(0, destroyed=True)], [finished(1, destroyed=True)]))
    assert result.outcome == OK
    assert "destroy_process_group()" in result.warnings[0]


def test_broadcasts_pair_by_order_and_different_lines_only_warn():
    ranks = [[enter(r, 0, site=f"s.py:{r + 3}"), leave(r, 0, site=f"s.py:{r + 3}"), finished(r)] for r in (0, 1)]
    result = judge(run(*ranks))
    assert result.outcome == OK
    assert result.warnings == ("broadcast #1 was reached from different lines: rank 0 at s.py:3, rank 1 at s.py:4",)


def test_a_job_that_stops_before_any_rank_starts_shows_the_launcher_output():
    result = judge(Run(2, False, 1, (RankLog(0, ()), RankLog(1, ())), "boom\nModuleNotFoundError: nope\n"))
    assert result.outcome == ERROR
    assert result.details[-1] == "ModuleNotFoundError: nope"


def test_the_result_serialises_to_the_documented_json_shape():
    result = judge(run([enter(0, 0), leave(0, 0), finished(0)], [enter(1, 0), leave(1, 0), finished(1)]))
    document = json.loads(json.dumps(result.as_dict()))
    assert set(document) == {"outcome", "details", "warnings", "broadcasts"}
    assert document["broadcasts"][0]["ranks"][1]["site"] == "s.py:3"


def test_records_round_trip_and_a_torn_last_line_is_dropped(tmp_path):
    event = leave(0, 0, watched=(("x", "ab"),))
    protocol.record_path(tmp_path, 0).write_text(protocol.encode(event) + "\n" + '{"kind": "ent')
    assert protocol.read_events(tmp_path, 0) == (event,)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["missing.py"],
        [__file__, "--nproc", "1"],
        [__file__, "--timeout", "0"],
        [__file__, "--output-format", "xml"],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert verify_main(argv) == 2


# ---------------------------------------------------------------- the bootstrap's helpers


def test_fingerprints_tell_dtype_and_shape_apart_and_ignore_set_order():
    torch = pytest.importorskip("torch")
    from bcast_lint.harness.bootstrap import fingerprint

    ints = torch.arange(4, dtype=torch.int64)
    assert fingerprint(ints) == fingerprint(ints.clone())
    assert fingerprint(ints) != fingerprint(ints.view(torch.float64))  # same bytes, other dtype
    assert fingerprint(ints) != fingerprint(ints.reshape(2, 2))
    assert fingerprint({"a", "b", "c"}) == fingerprint({"c", "b", "a"})


def test_watched_names_come_from_the_call_site():
    torch = pytest.importorskip("torch")
    import sys

    from bcast_lint.harness.bootstrap import watched_names

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


def _expected(program: Path) -> str:
    match = HEADER.match(program.read_text().splitlines()[0])
    assert match, f"{program} must start with `# verify: <outcome>`"
    assert match.group(1) in OUTCOMES
    return match.group(1)


def _checked_names(program: Path) -> tuple[str, ...]:
    names = HEADER.match(program.read_text().splitlines()[0]).group(2)
    return tuple(names.split(",")) if names else ()


def _timeout(program: Path) -> float:
    return HANG_TIMEOUT if _expected(program) == HANG else 60.0


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.runtime
@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", _runtime_programs(), ids=_id)
def test_broken_program_has_the_outcome_its_header_names(program):
    result = verify(str(program), timeout=_timeout(program), check=_checked_names(program))
    assert result.outcome == _expected(program), result.details
    assert result.details
    assert not _processes_running(program), "the job left processes behind"


def _processes_running(program: Path) -> list:
    psutil = pytest.importorskip("psutil")
    running = []
    for process in psutil.process_iter(["cmdline"]):
        if str(program) in " ".join(process.info["cmdline"] or ()):
            running.append(process)
    return running


def _corrected_version(program: Path, directory: Path) -> Path:
    """What `bcast-lint --fix --unsafe-fixes` makes of the program; the hand-fixed version where
    the rule has no automatic fix."""
    outcome = fix_source(program.read_bytes(), str(program), lambda code: True, unsafe=True)
    assert not [f.fix_rejected for f in outcome.original.findings if f.fix_rejected]
    if outcome.source == program.read_bytes():
        return program.with_name(program.stem + ".handfixed.py")
    fixed = directory / program.name
    fixed.write_bytes(outcome.source)
    assert not [f for f in outcome.remaining.findings if f.fix is not None]
    return fixed


@pytest.mark.runtime
@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", _runtime_programs(), ids=_id)
def test_fixed_program_is_ok_with_identical_values(program, tmp_path):
    corrected = _corrected_version(program, tmp_path)
    result = verify(str(corrected), timeout=60.0, check=_checked_names(program))
    assert result.outcome == OK, result.details
    assert result.broadcasts, "the corrected program still broadcasts"
    for broadcast in result.broadcasts:
        assert broadcast.agree
        assert len({call.value for call in broadcast.calls}) == 1
        assert len(broadcast.calls) == 2


@pytest.mark.runtime
@pytest.mark.timeout(120)
def test_cli_prints_json_and_exits_1_for_a_broken_program(capsys):
    program = FIXTURES / "BCL006" / "runtime_weights_result.py"
    assert verify_main([str(program), "--output-format", "json", "--timeout", "60"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["outcome"] == ERROR
    assert "AttributeError: 'NoneType' object has no attribute 'norm'" in document["details"][0]


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

"""Compare what the ranks recorded and decide the outcome of a run.

Collectives pair up by order, not by source line, so the n-th broadcast of every rank is compared
with the n-th broadcast of the others. The outcome is decided in this order:

- `error`: a rank raised, or was killed by a fatal signal, before finishing the script. Failures are
  listed earliest first, since a gloo `Connection closed by peer` on one rank is usually the echo of
  another rank's failure; ranks that were still inside a collective are named too.
- `hang`: the timeout hit before every rank finished; each rank's last unmatched ENTER says which
  collective it was waiting in, and a rank that finished says so.
- `divergent`: every rank finished, but the ranks made a different number of broadcasts, ended a
  broadcast with different values (argument, returned value, or a watched variable such as `x` in
  `broadcast(x.clone())`), or hold different values for a `--check` name at the end.
- `ok`: none of these.

Warnings do not change the outcome: ranks reaching the n-th broadcast from different lines (the
`if rank == 0: send side / else: receive side` pattern is legitimate), the harness having to call
`destroy_process_group()`, and a rank killed by a signal after it had finished everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from bcast_lint.harness import protocol
from bcast_lint.harness.protocol import Event, RankLog, Run

OK = "ok"
ERROR = "error"
HANG = "hang"
DIVERGENT = "divergent"
OUTCOMES = (OK, ERROR, HANG, DIVERGENT)


@dataclass(frozen=True)
class RankCall:
    """One rank's side of one broadcast."""

    rank: int
    site: str
    arg: str
    value: str | None = None
    result: str | None = None
    watched: tuple[tuple[str, str], ...] = ()
    error: str | None = None

    def as_dict(self) -> dict:
        return {
            "rank": self.rank,
            "site": self.site,
            "arg": self.arg,
            "value": self.value,
            "result": self.result,
            "watched": dict(self.watched),
            "error": self.error,
        }


@dataclass(frozen=True)
class BroadcastComparison:
    """The n-th broadcast of every rank that reached it."""

    index: int
    op: str
    calls: tuple[RankCall, ...]
    agree: bool

    def as_dict(self) -> dict:
        return {
            "index": self.index,
            "op": self.op,
            "agree": self.agree,
            "ranks": [call.as_dict() for call in self.calls],
        }


@dataclass(frozen=True)
class VerifyResult:
    outcome: str
    details: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    broadcasts: tuple[BroadcastComparison, ...] = ()

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    def as_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "details": list(self.details),
            "warnings": list(self.warnings),
            "broadcasts": [broadcast.as_dict() for broadcast in self.broadcasts],
        }


# ---------------------------------------------------------------- one rank at a time


@dataclass(frozen=True)
class RankState:
    """What one rank's events say about it."""

    rank: int
    broadcasts: tuple[tuple[Event, Event | None], ...]  # (ENTER, EXIT or None) in call order
    waiting_in: Event | None  # the last ENTER without its EXIT
    failure: Event | None  # the first EXIT with an error, else the SCRIPT_ERROR
    finished: Event | None
    fatal: str
    stderr: str

    @property
    def started(self) -> bool:
        return bool(self.broadcasts) or self.waiting_in is not None or self.finished is not None


def rank_state(log: RankLog) -> RankState:
    enters = {event.call: event for event in log.events if event.kind == protocol.ENTER}
    exits = {event.call: event for event in log.events if event.kind == protocol.EXIT}
    open_calls = [enter for call, enter in enters.items() if call not in exits]
    return RankState(
        rank=log.rank,
        broadcasts=tuple(
            (enter, exits.get(call)) for call, enter in sorted(enters.items()) if enter.family == protocol.BROADCAST
        ),
        waiting_in=open_calls[-1] if open_calls else None,
        failure=_first_failure(log.events),
        finished=_first(log.events, protocol.FINISHED),
        fatal=log.fatal.strip(),
        stderr=log.stderr,
    )


def _first(events: tuple[Event, ...], kind: str) -> Event | None:
    return next((event for event in events if event.kind == kind), None)


def _first_failure(events: tuple[Event, ...]) -> Event | None:
    failed_calls = [event for event in events if event.kind == protocol.EXIT and event.error]
    return failed_calls[0] if failed_calls else _first(events, protocol.SCRIPT_ERROR)


# ---------------------------------------------------------------- comparing broadcasts


def compare_broadcasts(states: list[RankState]) -> tuple[BroadcastComparison, ...]:
    count = max((len(state.broadcasts) for state in states), default=0)
    return tuple(_compare_nth(states, index) for index in range(count))


def _compare_nth(states: list[RankState], index: int) -> BroadcastComparison:
    calls = []
    for state in states:
        if index < len(state.broadcasts):
            calls.append(_rank_call(state.rank, *state.broadcasts[index]))
    op = _op(states, index)
    return BroadcastComparison(index, op, tuple(calls), agree=_agree(calls, len(states)))


def _op(states: list[RankState], index: int) -> str:
    ops = sorted({state.broadcasts[index][0].op for state in states if index < len(state.broadcasts)})
    return " / ".join(ops)


def _rank_call(rank: int, enter: Event, exit_: Event | None) -> RankCall:
    if exit_ is None:
        return RankCall(rank, enter.site, enter.arg, error="did not return")
    return RankCall(rank, enter.site, enter.arg, exit_.value, exit_.result, exit_.watched, exit_.error)


def _agree(calls: list[RankCall], nranks: int) -> bool:
    if len(calls) != nranks or any(call.error for call in calls):
        return False
    return not _differences(calls)


def _differences(calls: list[RankCall] | tuple[RankCall, ...]) -> list[str]:
    """Which of value, result and each watched name differ across the ranks' calls."""
    different = []
    for label, pick in (("the broadcast argument", lambda c: c.value), ("the returned value", lambda c: c.result)):
        if len({pick(call) for call in calls if pick(call) is not None}) > 1:
            different.append(label)
    names = sorted({name for call in calls for name, _ in call.watched})
    for name in names:
        if len({dict(call.watched).get(name) for call in calls}) > 1:
            different.append(f"`{name}`")
    return different


# ---------------------------------------------------------------- the verdict


def judge(run: Run) -> VerifyResult:
    states = [rank_state(log) for log in run.ranks]
    broadcasts = compare_broadcasts(states)
    warnings = tuple(_warnings(states, broadcasts))
    failed = [state for state in states if _failed(state)]
    if failed:
        details = _failure_details(failed) + _whereabouts([s for s in states if s not in failed])
        return VerifyResult(ERROR, tuple(details), warnings, broadcasts)
    if not all(state.finished for state in states):
        return _unfinished(run, states, warnings, broadcasts)
    divergences = _divergences(states, broadcasts)
    if divergences:
        return VerifyResult(DIVERGENT, tuple(divergences), warnings, broadcasts)
    return VerifyResult(OK, (), warnings, broadcasts)


def _failed(state: RankState) -> bool:
    return state.failure is not None or (bool(state.fatal) and state.finished is None)


def _failure_details(failed: list[RankState]) -> list[str]:
    ordered = sorted(failed, key=_failure_time)
    first = ordered[0].rank
    details = []
    for state in ordered:
        echo = f" (after rank {first} failed)" if state.rank != first else ""
        details.append(f"rank {state.rank}: {_describe_failure(state)}{echo}")
    return details


def _failure_time(state: RankState) -> float:
    if state.failure is not None:
        return state.failure.time
    # A fatal signal writes no event: it happened after the rank's last one.
    return state.waiting_in.time if state.waiting_in else float("inf")


def _describe_failure(state: RankState) -> str:
    if state.failure is not None:
        where = f" at {state.failure.site}" if state.failure.site else ""
        inside = f" (in {state.failure.op})" if state.failure.op else ""
        return f"{_one_line(state.failure.error)}{where}{inside}"
    signal_line = f"killed by a fatal signal ({_first_line(state.fatal)})"
    reason = _abort_reason(state.stderr)
    reason = f": {reason}" if reason else ""
    if state.waiting_in is not None:
        return f"{signal_line} inside {state.waiting_in.op} at {state.waiting_in.site}{reason}"
    return f"{signal_line}{reason}"


def _abort_reason(stderr: str) -> str:
    """The `what():` line C++ prints before std::terminate aborts the process."""
    for line in reversed(stderr.splitlines()):
        if "what():" in line:
            return line.split("what():", 1)[1].strip()
    return ""


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _whereabouts(states: list[RankState]) -> list[str]:
    """Where each rank that neither failed nor finished was when the job stopped."""
    lines = []
    for state in states:
        if state.finished is not None:
            lines.append(f"rank {state.rank}: finished the script, waiting for the other ranks")
        elif state.waiting_in is not None:
            lines.append(f"rank {state.rank}: waiting in {state.waiting_in.op} at {state.waiting_in.site}")
        elif state.started:
            lines.append(f"rank {state.rank}: running script code outside any collective")
        else:
            lines.append(f"rank {state.rank}: had not reached any collective")
    return lines


def _unfinished(
    run: Run, states: list[RankState], warnings: tuple[str, ...], broadcasts: tuple[BroadcastComparison, ...]
) -> VerifyResult:
    if run.timed_out:
        if all(state.finished for state in states):
            stuck = ("every rank finished the script, but the job did not exit",)
            return VerifyResult(HANG, stuck, warnings, broadcasts)
        return VerifyResult(HANG, tuple(_whereabouts(states)), warnings, broadcasts)
    stopped = f"the job stopped (exit status {run.returncode}) before every rank finished"
    launcher = _last_lines(run.launcher_output) if not any(state.started for state in states) else []
    return VerifyResult(ERROR, (stopped, *_whereabouts(states), *launcher), warnings, broadcasts)


def _last_lines(text: str, count: int = 5) -> list[str]:
    return [line for line in text.strip().splitlines() if line.strip()][-count:]


def _divergences(states: list[RankState], broadcasts: tuple[BroadcastComparison, ...]) -> list[str]:
    counts = {state.rank: len(state.broadcasts) for state in states}
    details = []
    if len(set(counts.values())) > 1:
        made = ", ".join(f"rank {rank} made {count}" for rank, count in counts.items())
        details.append(f"the ranks made different numbers of broadcasts: {made}")
    for broadcast in broadcasts:
        different = _differences(broadcast.calls)
        if different:
            details.append(_divergence_line(broadcast, different))
    details.extend(_check_divergences(states))
    return details


def _divergence_line(broadcast: BroadcastComparison, different: list[str]) -> str:
    site = broadcast.calls[0].site
    args = "; ".join(f"rank {call.rank} passed {call.arg}" for call in broadcast.calls)
    line = (
        f"after {broadcast.op} at {site} (broadcast #{broadcast.index + 1}) the ranks hold different values "
        f"for {', '.join(different)} ({args})"
    )
    if all(item.startswith("`") for item in different):
        line += ": the broadcast filled a temporary or a copy, not the variable itself"
    return line


def _check_divergences(states: list[RankState]) -> list[str]:
    values = [dict(state.finished.watched) for state in states]
    names = sorted({name for checked in values for name in checked})
    return [
        f"at the end of the script the ranks hold different values for `{name}`"
        for name in names
        if len({checked.get(name) for checked in values}) > 1
    ]


def _warnings(states: list[RankState], broadcasts: tuple[BroadcastComparison, ...]) -> list[str]:
    warnings = []
    for broadcast in broadcasts:
        sites = sorted({call.site for call in broadcast.calls})
        if len(sites) > 1:
            where = ", ".join(f"rank {call.rank} at {call.site}" for call in broadcast.calls)
            warnings.append(f"broadcast #{broadcast.index + 1} was reached from different lines: {where}")
    if any(state.finished and state.finished.destroyed for state in states):
        warnings.append(
            "the script never called torch.distributed.destroy_process_group(); the harness calls it once every "
            "rank has finished. Without it a rank can abort at exit (SIGABRT, `terminate called without an "
            "active exception`)"
        )
    for state in states:
        if state.fatal and state.finished is not None:
            warnings.append(f"rank {state.rank} finished the script, then died at exit: {_first_line(state.fatal)}")
    return warnings


def render_text(result: VerifyResult, script: str) -> str:
    lines = [f"{script}: {result.outcome}"]
    lines += [f"  {detail}" for detail in result.details]
    lines += [f"  warning: {warning}" for warning in result.warnings]
    return "\n".join(lines)

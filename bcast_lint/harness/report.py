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
  `broadcast(x.clone())`), hold different values for a `--check` name at the end, or a broadcast
  overwrote data: a receiving rank held a value of its own that differs from what it received while
  the source sent a placeholder (all zeros, None), or while other receivers held placeholders (each
  node's local main process filled its own value and the broadcast sent node 0's to every node).
  Every rank ends with the same values there, so comparing them afterwards sees nothing.
- `unverified`: every rank finished without calling any collective (and no `--check` name was
  compared): nothing was checked.
- `ok`: none of these; the verdict says how many collectives were checked on how many ranks.

Each line of the verdict is a `RuntimeEvent` that carries the script lines it happened at, so the
static findings can be tied to it (`harness.link`).

Warnings do not change the outcome: ranks reaching the n-th broadcast from different lines (the
`if rank == 0: send side / else: receive side` pattern is legitimate), the harness having to call
`destroy_process_group()` for a script that initialised its process group itself (not for one
that a framework such as accelerate set up), and a rank killed by a signal after it had finished
everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bcast_lint.harness import protocol
from bcast_lint.harness.protocol import Event, RankLog, Run

OK = "ok"
ERROR = "error"
HANG = "hang"
DIVERGENT = "divergent"
UNVERIFIED = "unverified"
OUTCOMES = (OK, ERROR, HANG, DIVERGENT, UNVERIFIED)
OUTPUT_LINES = 15  # of a failing rank's own output (its traceback), shown with an error


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
    src: int | None = None
    before: str | None = None  # fingerprint of the argument before the call
    blank: bool | None = None  # whether it held only a placeholder before the call

    def as_dict(self) -> dict:
        return {
            "rank": self.rank,
            "site": self.site,
            "arg": self.arg,
            "src": self.src,
            "before": self.before,
            "blank": self.blank,
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
class RuntimeEvent:
    """One line of the verdict and where in the script it happened.

    `sites` are the lines it happened at ("path:line": a failure, a rank waiting, a broadcast that
    diverged); `collectives` the broadcasts or collectives involved (for a script error, the last
    broadcast the failing rank completed, whose value it was probably using); `names` the
    `--check` names that differ at the end.
    """

    text: str
    sites: tuple[str, ...] = ()
    collectives: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"text": self.text, "sites": list(self.sites), "collectives": list(self.collectives),
                "names": list(self.names)}  # fmt: skip


@dataclass(frozen=True)
class RankInfo:
    """Where a rank ran: its global rank, its index on its node, and the node."""

    rank: int
    local_rank: int | None
    node: int | None

    def as_dict(self) -> dict:
        return {"rank": self.rank, "local_rank": self.local_rank, "node": self.node}


@dataclass(frozen=True)
class VerifyResult:
    outcome: str
    events: tuple[RuntimeEvent, ...] = ()
    warnings: tuple[str, ...] = ()
    broadcasts: tuple[BroadcastComparison, ...] = ()
    collectives: int = 0  # collective calls each rank made (the most any rank made)
    ranks: tuple[RankInfo, ...] = ()
    outputs: tuple[tuple[int, str], ...] = ()  # (rank, last lines of its own stderr) of failing ranks
    reached: tuple[str, ...] = ()  # the script's lines ("path:line") that some rank ran

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    @property
    def details(self) -> tuple[str, ...]:
        return tuple(event.text for event in self.events)

    @property
    def summary(self) -> str:
        """The verdict in one line: `ok: 3 collectives (2 broadcasts) checked on 2 ranks`."""
        if self.outcome != OK:
            return self.outcome
        calls = f"{self.collectives} collective{'s' if self.collectives != 1 else ''}"
        broadcasts = len(self.broadcasts)
        compared = f" ({broadcasts} broadcast{'s' if broadcasts != 1 else ''} compared)" if broadcasts else ""
        return f"ok: {calls}{compared} checked on {len(self.ranks)} ranks"

    def as_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "summary": self.summary,
            "verified": self.outcome != UNVERIFIED,
            "collectives": self.collectives,
            "world_size": len(self.ranks),
            "ranks": [rank.as_dict() for rank in self.ranks],
            "details": list(self.details),
            "events": [event.as_dict() for event in self.events],
            "warnings": list(self.warnings),
            "outputs": {str(rank): text for rank, text in self.outputs},
            "broadcasts": [broadcast.as_dict() for broadcast in self.broadcasts],
        }


# ---------------------------------------------------------------- one rank at a time


@dataclass(frozen=True)
class RankState:
    """What one rank's events say about it."""

    rank: int
    broadcasts: tuple[tuple[Event, Event | None], ...]  # (ENTER, EXIT or None) in call order
    collectives: int  # every collective call the rank entered, broadcasts included
    start: Event | None
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
        collectives=len(enters),
        start=_first(log.events, protocol.START),
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
    before = {"src": enter.src, "before": enter.before, "blank": enter.blank}
    if exit_ is None:
        return RankCall(rank, enter.site, enter.arg, error="did not return", **before)
    return RankCall(rank, enter.site, enter.arg, exit_.value, exit_.result, exit_.watched, exit_.error, **before)


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
    common = {
        "warnings": tuple(_warnings(states, broadcasts)),
        "broadcasts": broadcasts,
        "collectives": max((state.collectives for state in states), default=0),
        "ranks": tuple(_rank_info(state) for state in states),
        "reached": _reached(run),
    }
    failed = [state for state in states if _failed(state) and not _killed_by_the_harness(state, run)]
    if failed:
        events = _failure_events(failed) + _whereabouts([s for s in states if s not in failed])
        return VerifyResult(ERROR, tuple(events), outputs=_outputs(failed), **common)
    if not all(state.finished for state in states):
        outcome, events = _unfinished(run, states)
        return VerifyResult(outcome, events, **common)
    divergences = _divergences(states, broadcasts)
    if divergences:
        return VerifyResult(DIVERGENT, tuple(divergences), **common)
    if not common["collectives"] and not any(state.finished.watched for state in states):
        return VerifyResult(UNVERIFIED, (_nothing_verified(states),), **common)
    return VerifyResult(OK, (), **common)


def _reached(run: Run) -> tuple[str, ...]:
    return tuple(sorted({event.site for log in run.ranks for event in log.events
                         if event.kind == protocol.REACHED and event.site}))  # fmt: skip


def _rank_info(state: RankState) -> RankInfo:
    start = state.start
    return RankInfo(state.rank, start.local_rank if start else None, start.node if start else None)


def _failed(state: RankState) -> bool:
    return state.failure is not None or (bool(state.fatal) and state.finished is None)


def _killed_by_the_harness(state: RankState, run: Run) -> bool:
    """A failure recorded once the launcher began to kill a hung job: the killed peer's socket
    closed under this rank ("Connection reset by peer"), which says nothing of the script. On a
    loaded machine a rank may write it before it is killed in turn."""
    return run.stopped_at is not None and state.failure is not None and state.failure.time >= run.stopped_at


def _failure_events(failed: list[RankState]) -> list[RuntimeEvent]:
    ordered = sorted(failed, key=_failure_time)
    first = ordered[0].rank
    events = []
    for state in ordered:
        echo = f" (after rank {first} failed)" if state.rank != first else ""
        sites, collectives = _failure_sites(state)
        events.append(RuntimeEvent(f"rank {state.rank}: {_describe_failure(state)}{echo}", sites, collectives))
    return events


def _failure_sites(state: RankState) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Where a rank failed, and the collective involved: the one it failed in, else the last
    broadcast it completed (`x = dist.broadcast(x)` fails a line later, on using x)."""
    if state.failure is None:  # a fatal signal, inside the collective it was waiting in, if any
        site = (state.waiting_in.site,) if state.waiting_in else ()
        return site + (state.waiting_in.callers if state.waiting_in else ()), site
    sites = (state.failure.site,) if state.failure.site else ()
    if state.failure.op:
        return sites + state.failure.callers, sites
    completed = [enter.site for enter, exit_ in state.broadcasts if exit_ is not None and exit_.error is None]
    return sites, tuple(completed[-1:])


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


def _outputs(failed: list[RankState]) -> tuple[tuple[int, str], ...]:
    """The last lines of the first failing rank's own output: the user's traceback."""
    first = sorted(failed, key=_failure_time)[0]
    text = own_output(first.stderr)
    return ((first.rank, text),) if text else ()


# Traceback frames of the harness itself (the bootstrap, runpy) say nothing about the script.
_HARNESS_FRAMES = ("bcast_lint/harness/", "bcast_lint\\harness\\", "runpy")
# torchrun prefixes each line a worker writes with its rank.
_RANK_PREFIX = re.compile(r"^\[(?:default)?rank\d+\]: ?")


def own_output(stderr: str, count: int = OUTPUT_LINES) -> str:
    """The last `count` lines of a rank's stderr, without the harness's traceback frames."""
    lines, skipping = [], False
    for line in (_RANK_PREFIX.sub("", line) for line in stderr.rstrip().splitlines()):
        if line.startswith("  File "):
            skipping = any(marker in line for marker in _HARNESS_FRAMES)
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            lines.append(line)
    return "\n".join(lines[-count:])


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _whereabouts(states: list[RankState]) -> list[RuntimeEvent]:
    """Where each rank that neither failed nor finished was when the job stopped."""
    events = []
    for state in states:
        if state.finished is not None:
            events.append(RuntimeEvent(f"rank {state.rank}: finished the script, waiting for the other ranks"))
        elif state.waiting_in is not None or (state.failure is not None and state.failure.op):
            # A rank whose wait the harness's kill broke (_killed_by_the_harness) waited there too.
            waiting = state.waiting_in or state.failure
            # The helpers' calls on the way are where a finding at the call of one sits.
            events.append(RuntimeEvent(f"rank {state.rank}: waiting in {waiting.op} at {waiting.site}",
                                       (waiting.site, *waiting.callers), (waiting.site,)))
        elif state.started:
            events.append(RuntimeEvent(f"rank {state.rank}: running script code, not in a collective the harness "
                                       "records (DDP's gradient all-reduce is not recorded, for one)"))
        else:
            events.append(RuntimeEvent(f"rank {state.rank}: had not reached any collective"))
    return events


def _unfinished(run: Run, states: list[RankState]) -> tuple[str, tuple[RuntimeEvent, ...]]:
    if run.timed_out:
        if all(state.finished for state in states):
            return HANG, (RuntimeEvent("every rank finished the script, but the job did not exit"),)
        return HANG, tuple(_whereabouts(states))
    stopped = RuntimeEvent(f"the job stopped (exit status {run.returncode}) before every rank finished")
    launcher = _last_lines(run.launcher_output) if not any(state.started for state in states) else []
    return ERROR, (stopped, *_whereabouts(states), *(RuntimeEvent(line) for line in launcher))


def _last_lines(text: str, count: int = 5) -> list[str]:
    return [line for line in text.strip().splitlines() if line.strip()][-count:]


def _nothing_verified(states: list[RankState]) -> RuntimeEvent:
    if not any(state.finished and state.finished.initialized for state in states):
        return RuntimeEvent("the script never initialised torch.distributed, so nothing was verified: no collective ran")
    return RuntimeEvent("the script initialised torch.distributed but called no collective, so nothing was verified")


def _divergences(states: list[RankState], broadcasts: tuple[BroadcastComparison, ...]) -> list[RuntimeEvent]:
    counts = {state.rank: len(state.broadcasts) for state in states}
    events = []
    if len(set(counts.values())) > 1:
        made = ", ".join(f"rank {rank} made {count}" for rank, count in counts.items())
        extra = tuple(sorted({enter.site for state in states for enter, _ in state.broadcasts[min(counts.values()):]}))
        events.append(RuntimeEvent(f"the ranks made different numbers of broadcasts: {made}", extra, extra))
    for broadcast in broadcasts:
        different = _differences(broadcast.calls)
        line = _divergence_line(broadcast, different) if different else overwrite_line(broadcast, states)
        if line:
            sites = tuple(sorted({call.site for call in broadcast.calls}))
            events.append(RuntimeEvent(line, sites, sites))
    events.extend(_check_divergences(states))
    return events


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


def overwrite_line(broadcast: BroadcastComparison, states: list[RankState]) -> str | None:
    """A broadcast that replaced a receiver's own data, when the pattern says it was not meant to.

    Receiving ranks whose argument held data that differs from what arrived are overwritten. That
    is legitimate when every rank held data (each rank drew a seed, rank 0's wins), so it is
    reported only when the source sent a placeholder (the data was on the wrong rank), or when
    other receivers held placeholders (a value filled per node, under `is_local_main_process`).
    """
    calls = {call.rank: call for call in broadcast.calls}
    sources = {call.src for call in broadcast.calls}
    source = calls.get(next(iter(sources))) if len(sources) == 1 else None
    if source is None or source.before is None:
        return None
    receivers = [call for call in broadcast.calls if call.rank != source.rank]
    overwritten = [c.rank for c in receivers if c.blank is False and c.before != c.value]
    if not overwritten:
        return None
    site = f"{broadcast.op} at {source.site} (broadcast #{broadcast.index + 1})"
    if source.blank:
        return (f"{_ranks(overwritten)}'s value was overwritten by rank {source.rank}'s placeholder: is "
                f"{_ranks(overwritten)} meant to be the source? ({site})")  # fmt: skip
    blank = [c.rank for c in receivers if c.blank]
    if not blank:
        return None
    holders = sorted([source.rank, *overwritten])
    return (f"{_ranks(overwritten)}'s value was overwritten by rank {source.rank}'s: {_ranks(holders)}"
            f"{_local_mains(holders, states)} held values of their own while {_ranks(blank)} held placeholders, "
            f"and the broadcast sent rank {source.rank}'s to all: is each of them meant to keep its own? ({site})")  # fmt: skip


def _ranks(ranks: list[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return f"ranks {', '.join(str(rank) for rank in ranks[:-1])} and {ranks[-1]}"


def _local_mains(ranks: list[int], states: list[RankState]) -> str:
    local = {state.rank: state.start.local_rank for state in states if state.start}
    nodes = {state.start.node for state in states if state.start}
    if len(nodes) > 1 and all(local.get(rank) == 0 for rank in ranks):
        return " (the local main process of each node)"
    return ""


def _check_divergences(states: list[RankState]) -> list[RuntimeEvent]:
    values = [dict(state.finished.watched) for state in states]
    names = sorted({name for checked in values for name in checked})
    return [
        RuntimeEvent(f"at the end of the script the ranks hold different values for `{name}`", names=(name,))
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
    # A framework that initialised the group (accelerate) owns its teardown: tidying it up is
    # the harness's business, not news to the script's author.
    if any(state.finished and state.finished.destroyed and not state.finished.initialized_by for state in states):
        warnings.append(
            "the script never called torch.distributed.destroy_process_group(); the harness calls it once every "
            "rank has finished. Without it a rank can abort at exit (SIGABRT, `terminate called without an "
            "active exception`)"
        )
    for state in states:
        if state.fatal and state.finished is not None:
            warnings.append(f"rank {state.rank} finished the script, then died at exit: {_first_line(state.fatal)}")
    return warnings


def render_text(result: VerifyResult, script: str, notes: tuple[tuple[str, ...], ...] = ()) -> str:
    """The verdict; `notes[i]` are lines shown under event i (the findings tied to it)."""
    lines = [f"{script}: {result.summary}"]
    for index, detail in enumerate(result.details):
        lines.append(f"  {detail}")
        lines += [f"    {note}" for note in (notes[index] if index < len(notes) else ())]
    for rank, output in result.outputs:
        lines.append(f"  rank {rank}'s output (last lines):")
        lines += [f"    | {line}" for line in output.splitlines()]
    lines += [f"  warning: {warning}" for warning in result.warnings]
    return "\n".join(lines)

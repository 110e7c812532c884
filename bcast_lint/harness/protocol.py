"""The record format shared by the bootstrap (writer, inside each rank) and the report (reader).

Each rank appends one JSON object per line to `rank-<RANK>.jsonl` in the directory named by
`BCAST_LINT_RECORD_DIR`, flushing after every line so a rank that is killed or hangs still leaves
everything it did up to that point. The schema is the `Event` dataclass below, written with
`dataclasses.asdict`, so writer and reader cannot drift apart.

Kinds of event, in the order a rank writes them:

- START: the bootstrap is about to run the script (`pid`, `local_rank`, `node`).
- ENTER: the rank is about to call into a collective (`call`, `op`, `site`, `arg`; for a broadcast
  also `src`, the global source rank, `before`, the argument's fingerprint before the call, and
  `blank`, whether it held only a placeholder: zeros, None). Written before the real collective
  runs, so on a hang the last unmatched ENTER says where the rank waits.
- EXIT: that collective returned or raised (`value`, `result`, `watched` or `error`).
- REACHED: the rank ran a line of the script for the first time (`site`). Written as it happens,
  so a rank that hangs or is killed still says how far it got: a finding whose line no rank
  reached was not tested by the run, whatever its outcome.
- SCRIPT_ERROR: the script raised (`error`, `site`: the innermost line of the script in the
  traceback).
- FINISHED: the script ran to its end (`watched`: the `--check` names; `destroyed`: whether the
  harness had to call `destroy_process_group()` because the script did not; `initialized`:
  whether the process group was ever initialised; `initialized_by`: the framework that
  initialised it, such as accelerate, which owns its teardown, or None for the script's own code).

Fields added later have defaults, so records and synthetic events written without them still
decode.

It also holds what the launcher hands the report (`RankLog`, `Run`). Standard library only: the
parent process never needs torch to read records.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

# A broadcast needs a receiver: a job has at least this many ranks in all.
MIN_PROCESSES = 2

RECORD_DIR_ENV = "BCAST_LINT_RECORD_DIR"
# The script's name in reports, when the file run is a copy (`verify --fix` runs a fixed copy).
SCRIPT_NAME_ENV = "BCAST_LINT_SCRIPT_NAME"
# Comma-separated module-level names whose values the bootstrap fingerprints at script end.
CHECK_ENV = "BCAST_LINT_CHECK"

START = "start"
ENTER = "enter"
EXIT = "exit"
REACHED = "reached"
SCRIPT_ERROR = "script_error"
FINISHED = "finished"

# Broadcast-family calls are compared across ranks; other collectives are recorded only so a
# hang can name the collective a rank is waiting in.
BROADCAST = "broadcast"
OTHER_COLLECTIVE = "collective"


@dataclass(frozen=True)
class Event:
    kind: str
    rank: int
    time: float
    pid: int | None = None
    call: int | None = None  # 0-based index among this rank's collective calls
    family: str | None = None  # BROADCAST or OTHER_COLLECTIVE
    op: str | None = None  # e.g. "torch.distributed.broadcast"
    site: str | None = None  # "path:line" in the user's script
    callers: tuple[str, ...] = ()  # the script's outer lines on the stack ("path:line"), innermost first
    arg: str | None = None  # type/shape/dtype/device of the argument before the call
    value: str | None = None  # fingerprint of the argument after the call
    result: str | None = None  # fingerprint of what the call returned
    watched: tuple[tuple[str, str], ...] = ()  # (variable name, fingerprint) pairs
    error: str | None = None  # "TypeError: message"
    destroyed: bool = False
    local_rank: int | None = None  # LOCAL_RANK: the rank's index on its (simulated) node
    node: int | None = None  # GROUP_RANK: which (simulated) node the rank runs on
    src: int | None = None  # the broadcast's global source rank
    before: str | None = None  # fingerprint of the broadcast argument before the call
    blank: bool | None = None  # whether that argument held only a placeholder (all zeros, None)
    initialized: bool = False
    initialized_by: str | None = None


def record_path(record_dir: str | Path, rank: int) -> Path:
    return Path(record_dir) / f"rank-{rank}.jsonl"


def output_path(record_dir: str | Path, rank: int, stream: str) -> Path:
    """Where a rank's stdout, stderr or fatal-signal report ("stdout", "stderr", "fatal") goes."""
    return Path(record_dir) / f"rank-{rank}.{stream}"


def encode(event: Event) -> str:
    return json.dumps(dataclasses.asdict(event))


def decode(line: str) -> Event:
    fields = json.loads(line)
    fields["watched"] = tuple(tuple(pair) for pair in fields.get("watched", ()))
    fields["callers"] = tuple(fields.get("callers", ()))
    return Event(**fields)


def read_events(record_dir: str | Path, rank: int) -> tuple[Event, ...]:
    """Every complete line a rank wrote; a line cut short by a kill is dropped."""
    path = record_path(record_dir, rank)
    if not path.exists():
        return ()
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(decode(line))
        except json.JSONDecodeError:
            continue
    return tuple(events)


@dataclass(frozen=True)
class RankLog:
    """Everything one rank left behind: its events and the tails of its output files."""

    rank: int
    events: tuple[Event, ...]
    fatal: str = ""  # faulthandler's report when a fatal signal (SIGABRT, SIGSEGV) killed the rank
    stderr: str = ""


@dataclass(frozen=True)
class Run:
    """One finished (or killed) job, as the launcher hands it to the report."""

    nproc: int  # ranks in all (the world size), over every node
    timed_out: bool
    returncode: int | None
    ranks: tuple[RankLog, ...]
    launcher_output: str = ""  # tail of torchrun's own output, for failures before any script ran
    nnodes: int = 1
    # time.time() when the launcher found the job hung and began to kill it: what a rank records
    # after it (a peer's socket closed under it) is the kill's doing, not the script's.
    stopped_at: float | None = None

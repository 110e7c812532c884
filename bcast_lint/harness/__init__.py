"""`bcast-lint verify`: run a program as a real multi-process CPU job and check its broadcasts.

The launcher starts the script under torchrun with the bootstrap in every rank; the bootstrap
records each collective call to per-rank files (see `protocol`); the report compares the ranks'
records and names the outcome: ok, error, hang, divergent, or unverified when the script ran no
collective at all.

Importing this package needs only the standard library: torch and psutil (the `[harness]`
extra) are imported when a job is launched, so `verify --help` and the missing-extra message
work without them.
"""

from __future__ import annotations

from bcast_lint.harness.report import VerifyResult, judge


def verify(
    script_path: str,
    nproc: int = 2,
    timeout: float = 60.0,
    script_args: tuple[str, ...] = (),
    check: tuple[str, ...] = (),
    nnodes: int = 1,
    shown: str | None = None,
) -> VerifyResult:
    """Run `script_path` on `nnodes` simulated nodes of `nproc` CPU ranks each (at least 2 ranks
    in all), killing the job after `timeout` seconds. Sites name the script `shown` (default: the
    path)."""
    from bcast_lint.harness.launcher import launch

    return judge(launch(script_path, nproc, timeout, tuple(script_args), tuple(check), nnodes, shown))


__all__ = ["VerifyResult", "verify"]

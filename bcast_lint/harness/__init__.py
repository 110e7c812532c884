"""`bcast-lint verify`: run a program as a real multi-process CPU job and check its broadcasts.

The launcher starts the script under torchrun with the bootstrap in every rank; the bootstrap
records each collective call to per-rank files (see `protocol`); the report compares the ranks'
records and names the outcome: ok, error, hang or divergent.
"""

from __future__ import annotations

from bcast_lint.harness.launcher import launch
from bcast_lint.harness.report import VerifyResult, judge


def verify(
    script_path: str,
    nproc: int = 2,
    timeout: float = 60.0,
    script_args: tuple[str, ...] = (),
    check: tuple[str, ...] = (),
) -> VerifyResult:
    """Run `script_path` on `nproc` (at least 2) CPU ranks, killing the job after `timeout` seconds."""
    return judge(launch(script_path, nproc, timeout, tuple(script_args), tuple(check)))


__all__ = ["VerifyResult", "verify"]

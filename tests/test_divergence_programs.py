"""The divergence corpus (`tests/data/divergence/`, issue 20's targets), run for real: programs whose
ranks take different paths through values that differ between ranks, not through a rank test. The
ones the linter finds now live in `fixtures/` (the README says where); these are the rest.
Each broken program fails as its first line says (`# verify: <outcome> [check=names]`), its
`.handfixed.py` version is ok, and every `lookalike_*.py` is ok. The README there says what each
program is modelled on.

These start real torchrun jobs (7-30 s each on 2 cores); select or skip them with `-m runtime`.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bcast_lint.harness import verify
from bcast_lint.harness.report import OK
from tests.test_harness import _assert_every_rank_agrees, _processes_running, _runs

DIVERGENCE = Path(__file__).resolve().parent / "data" / "divergence"
FIXED_TIMEOUT = 60.0  # a correct program finishes in under 20 s here; the hang timeout is for broken ones
EXPECT = re.compile(r"# expect: (BCL\d{3}|NEW-[\w-]+)$")


def _broken() -> list[Path]:
    return sorted(p for p in DIVERGENCE.glob("[!.]*.py")
                  if not p.name.endswith(".handfixed.py") and not p.name.startswith("lookalike_"))  # fmt: skip


def _lookalikes() -> list[Path]:
    return sorted(DIVERGENCE.glob("lookalike_*.py"))


def _hand_fixed(program: Path) -> Path:
    return program.with_name(program.stem + ".handfixed.py")


def _run(program: Path, options):
    return verify(str(program), options.nproc, options.timeout, options.script_args, options.check, options.nnodes)


def _name(path: Path) -> str:
    return path.name


def _expected(program: Path) -> str:
    """The outcome the header names (these programs run at one world size)."""
    return _runs(program)[0][0]


def _run_options(program: Path):
    return _runs(program)[0][1]


def test_each_broken_program_has_a_failing_header_one_expected_finding_and_a_hand_fixed_version():
    assert _broken()
    for program in _broken():
        assert _expected(program) != OK, program
        assert _hand_fixed(program).exists(), program
        expected = [line for line in program.read_text().splitlines() if EXPECT.search(line)]
        assert expected, f"{program.name} marks no line with `# expect: CODE`"
    for program in _lookalikes():
        assert _expected(program) == OK, program
        assert "# expect:" not in program.read_text(), program


def test_the_readme_lists_every_program_and_where_the_found_ones_went():
    readme = (DIVERGENCE / "README.md").read_text()
    for program in _broken() + _lookalikes():
        assert f"`{program.stem}`" in readme, program.name
    moved = re.findall(r"`(fixtures/BCL\d{3}/\w+\.py)`", readme)
    assert len(moved) >= 20
    root = DIVERGENCE.parent.parent.parent
    for path in moved:
        assert (root / path).exists(), path
        assert (root / path).with_suffix(".expected").exists(), path


@pytest.mark.runtime
@pytest.mark.timeout(200)
@pytest.mark.parametrize("program", _broken(), ids=_name)
def test_broken_program_fails_as_its_header_says_and_its_hand_fixed_version_is_ok(program):
    options = _run_options(program)
    broken = _run(program, options)
    assert broken.outcome == _expected(program), broken.details
    assert broken.details
    fixed = _run(_hand_fixed(program), dataclasses.replace(options, timeout=FIXED_TIMEOUT))
    _assert_every_rank_agrees(fixed, options)
    assert not _processes_running(program), "the job left processes behind"

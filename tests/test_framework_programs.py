"""Framework programs the linter does not find yet (`tests/data/frameworks/`, issue 21), run for
real: each broken program fails as its first line says (`# verify: <outcome> needs=<framework>`),
and its `.handfixed.py` version is ok. The README there says what each is modelled on and why the
linter misses it; a program the linter finds moves to `fixtures/` as a runtime fixture.

These start real torchrun jobs (35-45 s each on 2 cores); select or skip them with `-m runtime`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bcast_lint.harness import verify
from tests.test_harness import _assert_every_rank_agrees, _header, _processes_running, _require, _runs

FRAMEWORKS = Path(__file__).resolve().parent / "data" / "frameworks"
EXPECT = re.compile(r"# expect: BCL\d{3}$")


def _broken() -> list[Path]:
    return sorted(p for p in FRAMEWORKS.glob("[!.]*.py") if not p.name.endswith(".handfixed.py"))


def _hand_fixed(program: Path) -> Path:
    return program.with_name(program.stem + ".handfixed.py")


def _run(program: Path, options):
    return verify(str(program), options.nproc, options.timeout, options.script_args, options.check, options.nnodes)


def test_each_program_has_a_framework_a_hand_fixed_version_a_mark_and_a_row_in_the_readme():
    readme = (FRAMEWORKS / "README.md").read_text()
    assert _broken()
    for program in _broken():
        assert _header(program)[1].get("needs"), program.name
        assert _hand_fixed(program).exists(), program.name
        assert any(EXPECT.search(line) for line in program.read_text().splitlines()), program.name
        assert f"`{program.stem}`" in readme, program.name


@pytest.mark.runtime
@pytest.mark.timeout(200)
@pytest.mark.parametrize("program", _broken(), ids=lambda path: path.name)
def test_broken_program_fails_as_its_header_says_and_its_hand_fixed_version_is_ok(program):
    _require(_header(program)[1]["needs"])
    (expected, options), = _runs(program)
    broken = _run(program, options)
    assert broken.outcome == expected, broken.details
    assert broken.details
    fixed = _run(_hand_fixed(program), options)
    _assert_every_rank_agrees(fixed, options)
    assert not _processes_running(program), "the job left processes behind"

"""Where the fixture programs are and what is expected of each.

fixtures/<CODE>/<name>.py          a realistic program (broken, or a look-alike that is fine)
fixtures/<CODE>/<name>.expected    its findings, one `LINE:COLUMN CODE message` per line (empty: none)
fixtures/<CODE>/<name>.fixed.py    what `--fix --unsafe-fixes` must turn it into (absent: no change)
fixtures/<CODE>/<name>.handfixed.py  a correct version written by hand, for rules without a fix
"""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_DERIVED = (".fixed.py", ".handfixed.py")


def programs() -> list[Path]:
    # `[!.]`: a hidden file is verify's fixed copy of a program while another test runs it.
    return sorted(p for p in FIXTURES.glob("*/[!.]*.py") if not p.name.endswith(_DERIVED))


def hand_fixed_versions() -> list[Path]:
    return sorted(FIXTURES.glob("*/*.handfixed.py"))


def expected_findings(program: Path) -> list[str]:
    text = program.with_suffix(".expected").read_text()
    return [line.strip() for line in text.splitlines() if line.strip()]


def fixed_version(program: Path) -> Path:
    return program.with_name(program.stem + ".fixed.py")


def identifier(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"

"""Real flake8 with the installed plugin reports exactly what the CLI reports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.fixture_files import programs

ROOT = Path(__file__).resolve().parent.parent
_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>BCL\d+) ")


def _flake8(paths: list[str], *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "BCL", *extra, *paths],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_flake8_reports_what_the_cli_reports_on_every_fixture():
    paths = [str(p.relative_to(ROOT)) for p in programs()]
    flake8 = _flake8(paths)
    found = sorted(
        (m["path"], int(m["line"]), int(m["column"]), m["code"])
        for m in map(_FLAKE8_LINE.match, flake8.stdout.splitlines()) if m)
    cli = subprocess.run([sys.executable, "-m", "bcast_lint", "--output-format", "json", *paths],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    expected = sorted((f["filename"], f["line"], f["column"], f["code"]) for f in json.loads(cli.stdout))
    assert expected, "the fixtures must produce findings"
    assert found == expected, flake8.stderr


def test_flake8_noqa_and_unparsable_files(tmp_path):
    (tmp_path / "noqa.py").write_text(
        "import torch.distributed as dist\n"
        "if dist.get_rank() == 0:\n    t = dist.get_world_size()\n"
        "dist.broadcast(t, 0)  # noqa: BCL002\n")
    (tmp_path / "broken.py").write_text("import torch.distributed as dist\ndist.broadcast(\n")
    result = _flake8([str(tmp_path / "noqa.py"), str(tmp_path / "broken.py")])
    assert "Traceback" not in result.stderr
    assert "noqa.py" not in result.stdout
    disabled = _flake8([str(tmp_path / "noqa.py")], "--disable-noqa")
    assert "noqa.py:4:1: BCL002" in disabled.stdout

"""Re-verify a corpus of broken distributed programs, their hand fixes and look-alikes at run time.

    python scripts/verify_corpus.py tests/data/blind [--timeout 25] [--only PATTERN] [--results FILE]
    python scripts/verify_corpus.py tests/data/blind --lint [--extend-select BCL012]

Every `*.py` file of DIR whose first line is a header

    # verify: <outcome>[,<outcome>] [check=NAME,...] [nproc=N[,N]] [nnodes=N]

is run with `bcast-lint verify --output-format json` (a real multi-process gloo job on CPU). A
broken program `<name>.py` passes when the outcome is one the header names (`error`, `hang`,
`divergent`, ...); a hand-fixed program `<name>.handfixed.py` and a look-alike `lookalike_*.py`
pass when the outcome is `ok` (their header must say `ok` too). Files without a header (helper
modules a program imports) are skipped. The jobs run one at a time; the table is printed at the
end, and the exit status is 1 when any program did not behave as its header says.

With `--lint` nothing is run: the directory is linted once (`bcast-lint --no-cache --output-format
json`) and each program's `# expect: CODE` marks are compared with the findings: a mark is found
when a finding of that code is on its line or one line away; any finding in a hand-fixed program or
a look-alike is a false alarm.

Not part of the pytest suite: each job starts a process group, and hangs last until the timeout.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HEADER = "# verify:"


@dataclass
class Header:
    outcomes: list[str]
    checks: list[str] = field(default_factory=list)
    nproc: str | None = None
    nnodes: str | None = None


@dataclass
class Result:
    program: str
    kind: str
    expected: str
    got: str
    passed: bool
    seconds: float
    detail: str


def parse_header(path: Path) -> Header | None:
    with path.open(encoding="utf-8") as f:
        first = f.readline().strip()
    if not first.startswith(HEADER):
        return None
    words = first[len(HEADER):].split()
    if not words:
        raise SystemExit(f"{path}: empty '# verify:' header")
    header = Header(outcomes=words[0].split(","))
    for word in words[1:]:
        key, _, value = word.partition("=")
        if key == "check":
            header.checks = [v for v in value.split(",") if v]
        elif key == "nproc":
            header.nproc = value
        elif key == "nnodes":
            header.nnodes = value
        else:
            raise SystemExit(f"{path}: unknown header field {word!r}")
    return header


def kind_of(path: Path) -> str:
    if path.name.endswith(".handfixed.py"):
        return "handfixed"
    if path.name.startswith("lookalike_"):
        return "lookalike"
    return "broken"


def bcast_lint_command() -> list[str]:
    exe = shutil.which("bcast-lint")
    return [exe] if exe else [sys.executable, "-m", "bcast_lint"]


def verify(path: Path, header: Header, timeout: float) -> tuple[str, str, float]:
    cmd = [*bcast_lint_command(), "verify", "--timeout", str(timeout), "--output-format", "json"]
    for name in header.checks:
        cmd += ["--check", name]
    if header.nproc:
        cmd += ["--nproc", header.nproc]
    if header.nnodes:
        cmd += ["--nnodes", header.nnodes]
    cmd.append(str(path))
    start = time.monotonic()
    # Generous outer limit: verify enforces --timeout per job itself (several jobs with nproc=2,3).
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout * 4 + 120)
    seconds = time.monotonic() - start
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return "unreadable", tail[0], seconds
    if isinstance(report, list):  # one report per world size
        outcomes = sorted({r.get("outcome", "?") for r in report})
        details = [d for r in report for d in r.get("details", [])]
        return ",".join(outcomes), (details[0] if details else ""), seconds
    details = report.get("details", [])
    return report.get("outcome", "?"), (details[0] if details else ""), seconds


def programs(directory: Path, only: str | None) -> list[tuple[Path, Header]]:
    found = []
    for path in sorted(directory.glob("*.py")):
        if only and not fnmatch.fnmatch(path.name, only):
            continue
        header = parse_header(path)
        if header is not None:
            found.append((path, header))
    return found


EXPECT = re.compile(r"#\s*expect:\s*([A-Za-z0-9-]+)\s*$")


def expectations(path: Path) -> list[tuple[int, str]]:
    marks = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            marks.append((number, m.group(1)))
    return marks


def lint(directory: Path, only: str | None, extend_select: str | None) -> int:
    cmd = [*bcast_lint_command(), "--no-cache", "--output-format", "json"]
    if extend_select:
        cmd += ["--extend-select", extend_select]
    proc = subprocess.run([*cmd, str(directory)], capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bcast-lint failed ({proc.returncode}): {proc.stderr.strip()}")
    by_file: dict[str, list[dict]] = {}
    for finding in json.loads(proc.stdout or "[]"):
        by_file.setdefault(Path(finding["filename"]).name, []).append(finding)

    found = expected = false_alarms = clean = 0
    print("| Program | Kind | Expected | Linter | Result |")
    print("|---|---|---|---|---|")
    for path, _header in programs(directory, only):
        kind = kind_of(path)
        findings = sorted(by_file.get(path.name, []), key=lambda f: (f["line"], f["code"]))
        said = ", ".join(f"{f['code']}:{f['line']}" for f in findings) or "silent"
        if kind != "broken":
            result = "false alarm" if findings else "ok (silent)"
            false_alarms += bool(findings)
            clean += not findings
            print(f"| `{path.name}` | {kind} | silent | {said} | {result} |")
            continue
        marks = expectations(path)
        results = []
        for line, code in marks:
            expected += 1
            near = [f for f in findings if abs(f["line"] - line) <= 1]
            if any(f["code"] == code for f in near):
                found += 1
                results.append("found")
            elif near:
                results.append(f"other code at the line ({', '.join(f['code'] for f in near)})")
            elif any(f["code"] == code for f in findings):
                results.append("same code, other line")
            else:
                results.append("missed")
        wanted = ", ".join(f"{code}:{line}" for line, code in marks) or "(no mark)"
        print(f"| `{path.name}` | broken | {wanted} | {said} | {'; '.join(results)} |")
    others = clean + false_alarms
    print(f"\nRecall: {found}/{expected} marks found (right code, line +-1). "
          f"False alarms: {false_alarms} of {others} hand-fixed and look-alike programs.")
    return 0


def shorten(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--timeout", type=float, default=25.0, help="seconds per job (verify --timeout)")
    parser.add_argument("--only", help="only files whose name matches this glob")
    parser.add_argument("--results", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--lint", action="store_true", help="compare lint findings with the expect marks instead")
    parser.add_argument("--extend-select", help="with --lint: codes to add to the selection (opt-in rules)")
    args = parser.parse_args(argv)
    if args.lint:
        return lint(args.directory, args.only, args.extend_select)

    results: list[Result] = []
    for path, header in programs(args.directory, args.only):
        kind = kind_of(path)
        expected = header.outcomes if kind == "broken" else ["ok"]
        got, detail, seconds = verify(path, header, args.timeout)
        passed = got in expected and (kind == "broken" or header.outcomes == ["ok"])
        if kind != "broken" and header.outcomes != ["ok"]:
            detail = f"header says {','.join(header.outcomes)}, but a {kind} program must be ok; " + detail
        results.append(Result(path.name, kind, ",".join(expected), got, passed, round(seconds, 1), detail))
        print(f"{'PASS' if passed else 'FAIL'} {path.name}: {got} (expected {','.join(expected)}, {seconds:.0f} s)",
              flush=True)

    print()
    print("| Program | Kind | Expected | Verify | Pass | Seconds | First detail |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| `{r.program}` | {r.kind} | {r.expected} | {r.got} | {'yes' if r.passed else 'NO'} | "
              f"{r.seconds:.0f} | {shorten(r.detail).replace('|', '/')} |")
    failed = [r for r in results if not r.passed]
    print(f"\n{len(results) - len(failed)} of {len(results)} programs behaved as their headers say.")
    if args.results:
        args.results.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

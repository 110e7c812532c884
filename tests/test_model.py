"""Findings survive the JSON round trip the cache and `--output-format json` rely on."""

from bcast_lint.model import Edit, Finding, Fix, SAFE


def test_finding_round_trips_with_help_and_fix():
    fix = Fix(SAFE, "Use zeros", (Edit(1, 5, 1, 10, "zeros"),))
    finding = Finding("BCL003", "'x' is uninitialised", "a.py", 1, 5, 1, 10, fix, "allocate it with zeros")
    again = Finding.from_dict(finding.as_dict())
    assert again.as_dict() == finding.as_dict()
    assert again.help == "allocate it with zeros"


def test_entry_without_help_reads_as_none():
    data = Finding("BCL001", "m", "a.py", 1, 1, 1, 2).as_dict()
    del data["help"]
    assert Finding.from_dict(data).help is None

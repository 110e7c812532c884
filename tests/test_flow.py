"""The data flow's definitions grow with a function's conditional writes and nested loops, not
exponentially, and keep every write the rules ask about."""

import textwrap

import libcst as cst

from bcast_lint.analysis.module import ModuleAnalysis

WRITES = 16


def _definitions(body: str, name: str) -> list[frozenset]:
    """The definitions of `name` reaching the broadcast, one set per world."""
    code = "import torch\nimport torch.distributed as dist\n" + textwrap.dedent(body)
    analysis = ModuleAnalysis(cst.parse_module(code), "case.py")
    (site,) = [site for site in analysis.calls if site.api.short_name == "broadcast"]
    return list(analysis.definitions(site, name).values())


def test_conditional_writes_into_one_buffer_do_not_double_its_definitions():
    writes = "".join(f"    if flags[{k}]:\n        buf[{k}] = {k}\n" for k in range(WRITES))
    found = _definitions(f"def share(flags):\n    buf = torch.zeros({WRITES})\n{writes}"
                         "    dist.broadcast(buf, 0)\n", "buf")
    # One more variant per write (none, the first, the first two, ...), not 2 ** WRITES.
    assert found and all(len(definitions) == WRITES + 1 for definitions in found)
    assert all(max(len(d.writes) for d in definitions) == WRITES for definitions in found)


def test_a_write_repeated_by_nested_loops_is_recorded_once():
    found = _definitions("def share(rows):\n    buf = torch.zeros(4)\n    for row in rows:\n"
                         "        for item in row:\n            for part in item:\n                buf += part\n"
                         "    dist.broadcast(buf, 0)\n", "buf")
    # The loops may run no time: the buffer as allocated, and once written.
    assert found and all(sorted(len(d.writes) for d in definitions) == [0, 1] for definitions in found)


def test_a_whole_overwrite_on_one_path_stays_apart_from_the_path_without_it():
    found = _definitions("def share(ready):\n    buf = torch.empty(4)\n    if ready:\n        buf.copy_(torch.ones(4))\n"
                         "    dist.broadcast(buf, 0)\n", "buf")
    assert found and all(sorted(d.overwritten for d in definitions) == [False, True] for definitions in found)

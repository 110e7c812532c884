"""Parallel workers and the cache give exactly what a plain sequential run gives."""

from __future__ import annotations

import dataclasses
import os

import pytest

from bcast_lint.cache import Cache
from bcast_lint.config import Settings
from bcast_lint.runner import ADD_NOQA, DIFF, FIX, LINT, process_files
from tests.fixture_files import fixed_version, programs


def _files():
    return [(str(p), str(p)) for p in programs()]


def _fixable_files():
    """Every program with an automatic fix, and the first of each rule's folder: what the modes
    that rewrite files are compared on (all 146, four runs each per mode, cost a minute and a half)."""
    chosen, folders = [], set()
    for program in programs():
        if fixed_version(program).exists() or program.parent.name not in folders:
            chosen.append((str(program), str(program)))
            folders.add(program.parent.name)
    return chosen


def lint_files(files, settings, jobs, cache):
    return [outcome.result for outcome in process_files(files, settings, LINT, jobs, cache)]


def test_workers_give_the_same_results_as_one_process():
    sequential = lint_files(_files(), Settings(), jobs=1, cache=None)
    parallel = lint_files(_files(), Settings(), jobs=2, cache=None)
    assert parallel == sequential
    assert any(result.findings for result in sequential)


def test_cache_hit_gives_the_same_findings_and_fixes(tmp_path):
    cache = Cache(str(tmp_path / "cache"))
    cold = lint_files(_files(), Settings(), jobs=1, cache=cache)
    assert list((tmp_path / "cache").rglob("*.json"))
    warm = lint_files(_files(), Settings(), jobs=1, cache=cache)
    assert warm == cold
    assert [f.fix for r in warm for f in r.findings] == [f.fix for r in cold for f in r.findings]


def test_cache_key_depends_on_contents_and_selection(tmp_path):
    cache = Cache(str(tmp_path / "cache"))
    program = next(p for p in programs() if p.parent.name == "BCL003" and "lookalikes" not in p.name)
    everything = lint_files([(str(program), "a.py")], Settings(), jobs=1, cache=cache)
    assert {f.code for f in everything[0].findings} == {"BCL003"}
    ignoring = dataclasses.replace(Settings(), ignore=("BCL003",))
    assert lint_files([(str(program), "a.py")], ignoring, jobs=1, cache=cache)[0].findings == ()
    assert Cache.key(b"x = 1", ["BCL001"]) != Cache.key(b"x = 2", ["BCL001"])


def test_unreadable_file_is_an_error_result(tmp_path):
    result = lint_files([(str(tmp_path / "gone.py"), "gone.py")], Settings(), jobs=1, cache=None)
    assert result[0].error and "cannot read" in result[0].error


@pytest.mark.slow
@pytest.mark.parametrize("mode", [FIX, DIFF, ADD_NOQA])
def test_every_mode_gives_the_same_outcomes_in_workers_and_from_the_cache(tmp_path, mode):
    unsafe = dataclasses.replace(Settings(), unsafe_fixes=True)
    files = _fixable_files()
    sequential = process_files(files, unsafe, mode, jobs=1, cache=None)
    assert sequential == process_files(files, unsafe, mode, jobs=2, cache=None)
    assert any(outcome.new for outcome in sequential)
    cache = Cache(str(tmp_path / "cache"))
    process_files(files, unsafe, LINT, jobs=1, cache=cache)
    assert process_files(files, unsafe, mode, jobs=1, cache=cache) == sequential


def test_a_fix_run_writes_nothing(tmp_path):
    program = next(p for p in programs() if p.parent.name == "BCL003" and "lookalikes" not in p.name)
    (tmp_path / "a.py").write_bytes(program.read_bytes())
    outcome, = process_files([(str(tmp_path / "a.py"), "a.py")], Settings(), FIX, jobs=1, cache=None)
    assert outcome.new is not None and outcome.fixed and outcome.original == program.read_bytes()
    assert (tmp_path / "a.py").read_bytes() == program.read_bytes()


def test_a_defect_of_the_linter_on_one_file_is_that_files_error_and_the_others_are_linted(tmp_path, monkeypatch):
    from bcast_lint import fixer

    broken, fine = tmp_path / "broken.py", tmp_path / "fine.py"
    program = programs()[0].read_bytes()
    broken.write_bytes(program)
    fine.write_bytes(program)
    real = fixer.lint_checked

    def failing(data, filename, *args, **kwargs):
        if filename.endswith("broken.py"):
            raise AttributeError("'CompIf' object has no attribute 'search'")
        return real(data, filename, *args, **kwargs)

    monkeypatch.setattr(fixer, "lint_checked", failing)
    outcomes = process_files([(str(broken), str(broken)), (str(fine), str(fine))], Settings(), LINT, 1, None)
    assert outcomes[0].result.error == ("internal error (AttributeError: 'CompIf' object has no attribute "
                                        "'search'); this is a bug in bcast-lint, please report it")
    assert outcomes[1].result.error is None and outcomes[1].result.findings


HELPER_WITH_COLLECTIVE = "import torch.distributed as dist\n\n\ndef sync(x):\n    dist.all_reduce(x)\n"
HELPER_WITHOUT = "def sync(x):\n    return x\n"
CALLER = ("import torch.distributed as dist\nfrom mylib.util import sync\n\n\n"
          "def f(x):\n    if dist.get_rank() == 0:\n        sync(x)\n")


def _package(root, helper: str):
    (root / "mylib").mkdir(parents=True, exist_ok=True)
    (root / "mylib" / "__init__.py").write_text("")
    (root / "mylib" / "util.py").write_text(helper)
    (root / "train.py").write_text(CALLER)
    return str(root / "train.py")


def _codes(path: str, settings: Settings) -> list[str]:
    [result] = lint_files([(path, path)], settings, jobs=1, cache=None)
    return [finding.code for finding in result.findings]


def test_two_runs_in_one_process_do_not_share_a_project(tmp_path):
    # A Project read the helper's bytes once and keeps them: a second run that reused it would
    # still see the first helper, under another root or after the file changed.
    first = _package(tmp_path / "a", HELPER_WITH_COLLECTIVE)
    second = _package(tmp_path / "b", HELPER_WITHOUT)
    assert _codes(first, Settings()) == ["BCL005"]
    assert _codes(second, dataclasses.replace(Settings(), ignore=("BCL001",))) == []
    (tmp_path / "a" / "mylib" / "util.py").write_text(HELPER_WITHOUT)
    assert _codes(first, Settings()) == []
    (tmp_path / "a" / "mylib" / "util.py").write_text(HELPER_WITH_COLLECTIVE)
    assert _codes(first, Settings()) == ["BCL005"]


def test_no_module_keeps_a_project_after_a_run(tmp_path):
    import sys

    from bcast_lint.analysis.project import Project

    _codes(_package(tmp_path, HELPER_WITH_COLLECTIVE), Settings())
    held = [name for name, module in list(sys.modules.items()) if name.startswith("bcast_lint")
            for value in vars(module).values() if isinstance(value, Project)]
    assert held == []


def test_verify_lints_each_script_with_a_project_of_its_own(tmp_path):
    from bcast_lint.harness.link import lint_script

    path = _package(tmp_path, HELPER_WITH_COLLECTIVE)
    assert [f.code for f in lint_script(path, CALLER.encode())] == ["BCL005"]
    (tmp_path / "mylib" / "util.py").write_text(HELPER_WITHOUT)
    assert lint_script(path, CALLER.encode()) == ()


def _aged(path, seconds_ago=60):
    """Set the file's time in the past, as an edit long before the run leaves it (not "racy")."""
    import os
    import time
    stamp = time.time() - seconds_ago
    os.utime(path, (stamp, stamp))


def test_a_warm_run_does_not_read_files_the_index_knows(tmp_path, monkeypatch):
    from bcast_lint import runner

    program = next(p for p in programs() if p.parent.name == "BCL003" and "lookalikes" not in p.name)
    found, plain = tmp_path / "found.py", tmp_path / "plain.py"
    found.write_bytes(program.read_bytes())
    plain.write_text("x = 1\n")
    for path in (found, plain):
        _aged(path)
    files = [(str(found), "found.py"), (str(plain), "plain.py")]
    cache = Cache(str(tmp_path / "cache"))
    cold = lint_files(files, Settings(), jobs=1, cache=cache)
    read: list[str] = []
    monkeypatch.setattr(runner, "read_source", lambda path: read.append(path) or open(path, "rb").read())
    warm = lint_files(files, Settings(), jobs=1, cache=Cache(str(tmp_path / "cache")))
    assert warm == cold and {f.code for f in warm[0].findings} == {"BCL003"}
    assert read == []


def test_a_file_edited_since_it_was_indexed_is_read_again(tmp_path):
    program = next(p for p in programs() if p.parent.name == "BCL003" and "lookalikes" not in p.name)
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    _aged(path, 120)
    files = [(str(path), "a.py")]
    assert lint_files(files, Settings(), jobs=1, cache=Cache(str(tmp_path / "cache")))[0].findings == ()
    path.write_bytes(program.read_bytes())  # the same path, new bytes, a later time
    _aged(path, 60)
    edited = lint_files(files, Settings(), jobs=1, cache=Cache(str(tmp_path / "cache")))
    assert {f.code for f in edited[0].findings} == {"BCL003"}


def test_a_file_modified_just_now_is_not_indexed(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    cache = Cache(str(tmp_path / "cache"))
    lint_files([(str(path), "a.py")], Settings(), jobs=1, cache=cache)
    assert cache.known(str(path)) is None
    _aged(path)
    lint_files([(str(path), "a.py")], Settings(), jobs=1, cache=cache)
    assert cache.known(str(path)) is not None and not cache.known(str(path)).worth_a_look


def test_a_run_whose_files_the_pre_filter_skips_does_not_import_libcst(tmp_path):
    """Start-up stays cheap (the pre-commit hook, the tiny-file benchmark): LibCST is imported only
    for a file that must be parsed."""
    import os
    import subprocess
    import sys

    (tmp_path / "tiny.py").write_text("import os\n\nprint(os.getcwd())\n")
    (tmp_path / "empty.toml").write_text("")
    code = ("import sys\nfrom bcast_lint.cli import main\ntry:\n"
            f"    main(['--no-cache', '--config', {str(tmp_path / 'empty.toml')!r}, {str(tmp_path / 'tiny.py')!r}])\n"
            "except SystemExit:\n    pass\nsys.exit('libcst' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True).returncode == 0


def test_a_regenerated_framework_map_invalidates_the_cache():
    from importlib import resources

    from bcast_lint import cache as cache_module
    map_path = str(resources.files("bcast_lint.data").joinpath("framework_map.json"))
    before = os.stat(map_path)
    cache_module._code_fingerprint.cache_clear()
    old = cache_module._code_fingerprint()
    try:
        os.utime(map_path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        cache_module._code_fingerprint.cache_clear()
        assert cache_module._code_fingerprint() != old
    finally:
        os.utime(map_path, ns=(before.st_atime_ns, before.st_mtime_ns))
        cache_module._code_fingerprint.cache_clear()

"""The rule registry (bcast_lint.codes) agrees with the rule classes, and modules import alone."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bcast_lint
from bcast_lint import codes
from bcast_lint.codes import ALWAYS, NEVER, RULES, RULES_BY_CODE, SOMETIMES
from bcast_lint.config import Settings
from bcast_lint.engine import lint_source
from bcast_lint.rules.base import EXAMPLE_PRELUDE, Rule

ROOT = Path(__file__).resolve().parent.parent


def _rule_classes_in_package() -> set[type]:
    """Every Rule subclass defined in bcast_lint/rules/, found the way the registry must not."""
    import bcast_lint.rules as package

    found = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found.update(value for value in vars(module).values()
                     if inspect.isclass(value) and issubclass(value, Rule) and value is not Rule
                     and value.__module__ == module.__name__)
    return found


def test_every_rule_class_has_exactly_one_row():
    loaded = [spec.load() for spec in RULES]
    assert len(set(loaded)) == len(loaded)
    assert set(loaded) == _rule_classes_in_package()


@pytest.mark.parametrize("spec", RULES, ids=lambda spec: spec.code)
def test_row_and_class_agree(spec):
    rule = spec.load()
    assert rule.code == spec.code
    assert rule.name() == spec.name
    assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", spec.name)


def test_rows_are_in_code_order_with_unique_names():
    assert [spec.code for spec in RULES] == sorted(RULES_BY_CODE)
    assert len({spec.name for spec in RULES}) == len(RULES)
    assert codes.SYNTAX_ERROR not in RULES_BY_CODE


def _fixes_of_cases(spec) -> list[bool]:
    """For each INVALID case of the rule: whether a finding of it carries a fix."""
    results = []
    for case in spec.load().INVALID:
        source = (EXAMPLE_PRELUDE + case.code + "\n").encode()
        findings = lint_source(source, "case.py", lambda code: code == spec.code).findings
        results.append(any(finding.fix is not None for finding in findings))
    return results


@pytest.mark.parametrize("spec", RULES, ids=lambda spec: spec.code)
def test_fix_availability_matches_the_cases(spec):
    fixed = _fixes_of_cases(spec)
    declared = [case.expected_replacement is not None for case in spec.load().INVALID]
    assert fixed == declared, "a case's expected_replacement disagrees with the fix offered"
    if spec.fix is NEVER:
        assert not any(fixed)
    elif spec.fix is ALWAYS:
        assert all(fixed)
    else:  # SOMETIMES: the cases show both when there is a fix and when there is none
        assert any(fixed) and not all(fixed)


@pytest.mark.parametrize("spec", RULES, ids=lambda spec: spec.code)
def test_fix_safety_section_matches_availability(spec):
    section = spec.load().documentation().split("## Fix safety", 1)[1].lstrip()
    assert section.startswith("No fix") is (spec.fix is NEVER)


# --- opt-in rules -------------------------------------------------------------------------------


@pytest.fixture
def opt_in_bcl003(monkeypatch):
    """BCL003 as if it were opt-in (the semantics must hold before any opt-in rule exists)."""
    import bcast_lint.config

    monkeypatch.setattr(bcast_lint.config, "OPT_IN_CODES", frozenset({"BCL003"}))


@pytest.mark.parametrize(("select", "extend_select", "enabled"), [
    (("BCL",), (), False),
    (("ALL",), (), False),
    (("BCL00",), (), False),
    (("BCL003",), (), True),
    (("BCL",), ("BCL003",), True),
    (("BCL",), ("BCL00",), False),
])
def test_opt_in_code_is_enabled_only_by_its_full_code(opt_in_bcl003, select, extend_select, enabled):
    settings = Settings(select=select, extend_select=extend_select)
    assert settings.is_enabled("BCL003", "a.py") is enabled
    assert settings.is_enabled("BCL001", "a.py") is (select != ("BCL003",))


def test_opt_in_code_can_still_be_ignored(opt_in_bcl003):
    assert not Settings(select=("BCL003",), ignore=("BCL003",)).is_enabled("BCL003", "a.py")
    per_file = Settings(select=("BCL003",), per_file_ignores=(("a.py", ("BCL",)),))
    assert not per_file.is_enabled("BCL003", "a.py")


def test_selection_lists_the_enabled_codes(opt_in_bcl003):
    assert "BCL003" not in Settings().selection()
    assert Settings(extend_select=("BCL003",)).selection() == codes.ALL_CODES
    assert Settings(select=("BCL001", "BCL900")).selection() == ("BCL001", "BCL900")


def test_opt_in_rows_are_off_by_default():
    enabled = Settings().selection()
    assert [spec.code for spec in RULES if spec.code not in enabled] == sorted(codes.OPT_IN_CODES)


# --- one-way dependencies -----------------------------------------------------------------------


def _all_modules() -> list[str]:
    names = ["bcast_lint"]
    for info in pkgutil.walk_packages(bcast_lint.__path__, prefix="bcast_lint."):
        names.append(info.name)
    return sorted(names)


# Each module is imported with no module of bcast_lint loaded before it, as in a process of its
# own: an import cycle shows only when its module is the first imported. One process for all of
# them (one each took 70 interpreter start-ups); libcst and the standard library stay loaded.
_IMPORT_EACH_ALONE = """
import importlib, json, sys, traceback
failures, names = {}, sys.argv[1:]
sys.argv[1:] = ["--version"]  # what bcast_lint.__main__ runs when imported
for name in names:
    for loaded in [m for m in sys.modules if m == "bcast_lint" or m.startswith("bcast_lint.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except SystemExit as exit:
        if exit.code not in (0, None):
            failures[name] = f"SystemExit: {exit.code}"
    except BaseException as error:
        failures[name] = traceback.format_exception_only(type(error), error)[-1].strip()
print(json.dumps(failures))
"""


def test_every_module_imports_on_its_own():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", _IMPORT_EACH_ALONE, *_all_modules()], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {}


def test_registry_imports_no_rule_and_no_libcst():
    code = "import sys, bcast_lint.codes; sys.exit(any(m.startswith(('libcst', 'bcast_lint.rules')) " \
           "for m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


# --- where the selection shows --------------------------------------------------------------


def test_show_settings_lists_the_enabled_codes(tmp_path, monkeypatch, capsys):
    from bcast_lint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bcast-lint.toml").write_text('ignore = ["BCL003", "BCL9"]\n')
    assert main(["--show-settings", "."]) == 0
    enabled = [line for line in capsys.readouterr().out.splitlines() if "enabled =" in line]
    expected = tuple(c for c in RULES_BY_CODE if c != "BCL003" and c not in codes.OPT_IN_CODES)
    assert enabled == [f"  enabled = {expected!r}"]


def test_rule_all_lists_every_row_and_marks_opt_in(monkeypatch, capsys):
    import bcast_lint.cli
    from bcast_lint.cli import main

    monkeypatch.setattr(bcast_lint.cli, "RULES", (*RULES[:-1], _as_opt_in(RULES[-1])))
    assert main(["rule", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [*RULES_BY_CODE, "BCL900"]  # BCL900 last: not a rule
    assert [" opt-in " in line for line in lines] == [spec.opt_in for spec in RULES[:-1]] + [True, False]


def _as_opt_in(spec):
    import dataclasses

    return dataclasses.replace(spec, opt_in=True)

import os
import re
import subprocess
import sys

import pytest

from bcast_lint.config import (
    DEFAULT_EXCLUDE,
    ConfigError,
    Settings,
    find_config_file,
    glob_matches,
    load_settings,
)


def write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- discovery -------------------------------------------------------------------------------


def test_nearest_config_wins_over_outer_ones(tmp_path):
    write(tmp_path / "bcast-lint.toml", "select = ['BCL001']\n")
    inner = write(tmp_path / "pkg" / "sub" / ".bcast-lint.toml", "select = ['BCL002']\n")
    source = write(tmp_path / "pkg" / "sub" / "deep" / "mod.py")
    assert find_config_file(str(source)) == str(inner)
    assert find_config_file(str(source.parent)) == str(inner)
    assert find_config_file(str(tmp_path / "pkg")) == str(tmp_path / "bcast-lint.toml")


def test_file_names_are_tried_in_order_within_a_directory(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.bcast-lint]\nselect = ['BCL003']\n")
    write(tmp_path / "bcast-lint.toml", "select = ['BCL002']\n")
    assert find_config_file(str(tmp_path)) == str(tmp_path / "bcast-lint.toml")
    write(tmp_path / ".bcast-lint.toml", "select = ['BCL001']\n")
    assert find_config_file(str(tmp_path)) == str(tmp_path / ".bcast-lint.toml")


def test_pyproject_without_our_table_is_skipped(tmp_path):
    outer = write(tmp_path / "pyproject.toml", "[tool.bcast-lint]\nignore = ['BCL004']\n")
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'x'\ndependencies = ['bcast-lint']\n")
    write(tmp_path / "pkg" / "other" / "pyproject.toml", "[tool.ruff]\nline-length = 99\n")
    assert find_config_file(str(tmp_path / "pkg" / "other" / "a.py")) == str(outer)


def test_missing_start_path_still_walks_up(tmp_path):
    config = write(tmp_path / "bcast-lint.toml")
    assert find_config_file(str(tmp_path / "no" / "such" / "file.py")) == str(config)


def test_no_config_gives_defaults(tmp_path):
    settings = load_settings([str(tmp_path / "a.py")])
    if settings.source is None:  # a stray config above tmp would make this moot
        assert settings == Settings()
        assert settings.exclude == DEFAULT_EXCLUDE


def test_load_from_pyproject_sets_source_and_root(tmp_path):
    config = write(
        tmp_path / "pyproject.toml",
        "[tool.bcast-lint]\n"
        "select = ['BCL00']\nignore = ['BCL004']\nextend-select = ['BCL010']\n"
        "exclude = ['gen']\nextend-exclude = ['legacy/*.py']\n"
        "unsafe-fixes = true\nrespect-gitignore = false\n"
        "[tool.bcast-lint.per-file-ignores]\n'tests/*' = ['BCL001', 'BCL002']\n",
    )
    settings = load_settings([str(tmp_path / "src")])
    assert settings == Settings(
        select=("BCL00",),
        ignore=("BCL004",),
        extend_select=("BCL010",),
        exclude=("gen",),
        extend_exclude=("legacy/*.py",),
        per_file_ignores=(("tests/*", ("BCL001", "BCL002")),),
        unsafe_fixes=True,
        respect_gitignore=False,
        source=str(config),
        root=str(tmp_path),
    )


def test_explicit_config_file_beats_discovery(tmp_path):
    write(tmp_path / "bcast-lint.toml", "select = ['BCL001']\n")
    chosen = write(tmp_path / "elsewhere" / "ci.toml", "select = ['BCL002']\n")
    settings = load_settings([str(tmp_path)], config_file=str(chosen))
    assert settings.select == ("BCL002",)
    assert settings.source == str(chosen)


def test_stdin_searches_from_the_working_directory(tmp_path, monkeypatch):
    write(tmp_path / ".bcast-lint.toml", "ignore = ['BCL005']\n")
    monkeypatch.chdir(tmp_path)
    assert load_settings(["-"]).ignore == ("BCL005",)
    assert load_settings([]).ignore == ("BCL005",)


# --- overrides -------------------------------------------------------------------------------


def test_overrides_replace_file_values_and_extend_ones_add(tmp_path):
    write(tmp_path / "bcast-lint.toml", "select = ['BCL001']\nextend-select = ['BCL002']\nextend-exclude = ['a']\n")
    settings = load_settings(
        [str(tmp_path)],
        overrides={
            "select": ["BCL003"],
            "extend_select": ("BCL004",),
            "extend_exclude": ["b"],
            "unsafe_fixes": True,
            "ignore": None,  # not given on the command line
        },
    )
    assert settings.select == ("BCL003",)
    assert settings.extend_select == ("BCL002", "BCL004")
    assert settings.extend_exclude == ("a", "b")
    assert settings.unsafe_fixes is True
    assert settings.ignore == ()


def test_codes_are_case_insensitive_in_files_and_on_the_command_line(tmp_path):
    write(tmp_path / "bcast-lint.toml",
          "ignore = ['bcl003']\nper-file-ignores = { 'tests/*' = ['Bcl005'] }\n")
    settings = load_settings([str(tmp_path)], overrides={"select": ["bcl00"], "extend_select": ["all"]})
    assert settings.select == ("BCL00",) and settings.extend_select == ("ALL",)
    assert settings.ignore == ("BCL003",)
    assert settings.per_file_ignores == (("tests/*", ("BCL005",)),)
    assert not settings.is_enabled("BCL003", "train.py") and settings.is_enabled("BCL001", "train.py")


def test_override_with_unknown_code_names_the_option(tmp_path):
    with pytest.raises(ConfigError, match=r"command line: 'select': unknown rule code or prefix 'XYZ1'"):
        load_settings([str(tmp_path)], config_file=str(write(tmp_path / "c.toml")), overrides={"select": ["XYZ1"]})


def test_unknown_override_name_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load_settings([str(tmp_path)], config_file=str(write(tmp_path / "c.toml")), overrides={"colour": True})


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, key, problem",
    [
        ("selec = ['BCL001']", "selec", "unknown key"),
        ("select = ['BCL999']", "select", "unknown rule code or prefix 'BCL999'"),
        ("ignore = ['bcl999']", "ignore", "unknown rule code or prefix 'BCL999'"),
        ("select = 'BCL001'", "select", "expected a list of strings, got str"),
        ("exclude = ['a', 3]", "exclude", "expected a list of strings, found 3"),
        ("unsafe-fixes = 'yes'", "unsafe-fixes", "expected true or false"),
        ("per-file-ignores = ['a']", "per-file-ignores", "expected a table"),
        ("per-file-ignores = { 'a/*' = ['NOPE'] }", "per-file-ignores", "'a/\\*': unknown rule code"),
    ],
)
def test_bad_values_name_the_key_and_the_file(tmp_path, body, key, problem):
    config = write(tmp_path / "bcast-lint.toml", body + "\n")
    with pytest.raises(ConfigError) as excinfo:
        load_settings([str(tmp_path)])
    message = str(excinfo.value)
    assert str(config) in message
    assert f"'{key}'" in message
    assert re.search(problem, message), message


def test_bad_key_inside_pyproject_table(tmp_path):
    config = write(tmp_path / "pyproject.toml", "[tool.bcast-lint]\nfix = true\n")
    with pytest.raises(ConfigError, match=f"{config}: 'fix': unknown key"):
        load_settings([str(tmp_path)])


def test_invalid_toml_names_the_file(tmp_path):
    config = write(tmp_path / ".bcast-lint.toml", "select = ['BCL001'\n")
    with pytest.raises(ConfigError, match=f"{config}: invalid TOML"):
        load_settings([str(tmp_path)])


def test_invalid_pyproject_mentioning_us_is_an_error_not_skipped(tmp_path):
    config = write(tmp_path / "pyproject.toml", "[tool.bcast-lint\nselect = []\n")
    with pytest.raises(ConfigError, match=f"{config}: invalid TOML"):
        find_config_file(str(tmp_path))


def test_tool_table_that_is_not_a_table(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool]\nbcast-lint = 3\n")
    with pytest.raises(ConfigError, match=r"\[tool.bcast-lint\] must be a table"):
        load_settings([str(tmp_path)])


def test_missing_explicit_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read configuration"):
        load_settings([], config_file=str(tmp_path / "absent.toml"))


# --- rule selection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "select, ignore, code, enabled",
    [
        (("BCL",), (), "BCL003", True),
        (("BCL",), ("BCL003",), "BCL003", False),
        (("BCL",), ("BCL003",), "BCL004", True),
        (("BCL003",), ("BCL",), "BCL003", True),  # longer prefix beats shorter
        (("BCL003",), ("BCL",), "BCL004", False),
        (("BCL00",), ("BCL00",), "BCL001", False),  # ignore wins ties
        (("ALL",), (), "BCL900", True),
        (("ALL",), ("BCL9",), "BCL900", False),
        (("BCL001",), ("ALL",), "BCL001", True),
        (("BCL001",), (), "BCL002", False),
        ((), (), "BCL001", False),
    ],
)
def test_selector_precedence(select, ignore, code, enabled):
    assert Settings(select=select, ignore=ignore).is_enabled(code, "a.py") is enabled


def test_extend_select_adds_to_select():
    settings = Settings(select=("BCL001",), extend_select=("BCL01",), ignore=("BCL0",))
    assert settings.is_enabled("BCL001", "a.py")
    assert settings.is_enabled("BCL010", "a.py")
    assert not settings.is_enabled("BCL002", "a.py")


def test_per_file_ignores_apply_to_matching_files_only(tmp_path):
    settings = Settings(
        select=("BCL003",),
        per_file_ignores=(("tests/*", ("BCL",)), ("*_pb2.py", ("BCL003",))),
        root=str(tmp_path),
    )
    assert not settings.is_enabled("BCL003", str(tmp_path / "tests" / "test_a.py"))
    assert not settings.is_enabled("BCL003", str(tmp_path / "tests" / "deep" / "test_a.py"))
    assert not settings.is_enabled("BCL003", str(tmp_path / "src" / "x_pb2.py"))
    assert settings.is_enabled("BCL003", str(tmp_path / "src" / "tests" / "a.py"))
    assert settings.is_enabled("BCL003", str(tmp_path / "src" / "a.py"))


def test_per_file_ignores_relative_filenames_use_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = Settings(per_file_ignores=(("scripts/**", ("BCL004",)),))
    assert not settings.is_enabled("BCL004", "scripts/run/train.py")
    assert settings.is_enabled("BCL004", "train.py")


# --- excludes --------------------------------------------------------------------------------


def test_default_excludes_match_the_name_of_the_entry(tmp_path):
    settings = Settings(root=str(tmp_path))
    assert settings.is_excluded(str(tmp_path / ".venv"))
    assert settings.is_excluded(str(tmp_path / "pkg" / "build"))
    assert settings.is_excluded(str(tmp_path / "node_modules"))
    assert not settings.is_excluded(str(tmp_path / "pkg" / "builder.py"))


def test_exclusion_judges_the_entry_not_its_parents(tmp_path):
    # Discovery prunes at each directory, so an explicitly named build/ is still walked.
    assert not Settings(root=str(tmp_path)).is_excluded(str(tmp_path / "build" / "a.py"))


def test_force_exclude_judges_named_paths_and_their_parents(tmp_path):
    write(tmp_path / "bcast-lint.toml", "extend-exclude = ['third_party', 'gen/*.py']\nforce-exclude = true\n")
    settings = load_settings([str(tmp_path)])
    assert settings.force_exclude is True
    assert settings.is_force_excluded(str(tmp_path / "third_party" / "vendored.py"))
    assert settings.is_force_excluded(str(tmp_path / "gen" / "a.py"))
    assert not settings.is_force_excluded(str(tmp_path / "src" / "train.py"))
    off = load_settings([str(tmp_path)], overrides={"force_exclude": False})
    assert not off.is_force_excluded(str(tmp_path / "third_party" / "vendored.py"))


def test_exclude_replaces_defaults_and_extend_exclude_adds(tmp_path):
    settings = Settings(exclude=("generated",), extend_exclude=("legacy/*.py",), root=str(tmp_path))
    assert not settings.is_excluded(str(tmp_path / "build"))
    assert settings.is_excluded(str(tmp_path / "x" / "generated"))
    assert settings.is_excluded(str(tmp_path / "legacy" / "a.py"))
    assert not settings.is_excluded(str(tmp_path / "x" / "legacy" / "a.py"))  # slash anchors at root


def test_per_file_ignores_ignore_directories_above_the_root(tmp_path):
    root = tmp_path / "tests" / "project"
    settings = Settings(per_file_ignores=(("tests", ("BCL",)),), root=str(root))
    assert settings.is_enabled("BCL001", str(root / "src" / "a.py"))
    assert not settings.is_enabled("BCL001", str(root / "tests" / "a.py"))


@pytest.mark.parametrize(
    "pattern, path, matched",
    [
        ("**/fixtures", "a/b/fixtures/c.py", True),
        ("**/fixtures", "fixtures/c.py", True),
        ("src/**/gen_*.py", "src/gen_a.py", True),
        ("src/**/gen_*.py", "src/x/y/gen_a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("{tests,docs}/*", "docs/a.py", True),
        ("{tests,docs}/*", "src/a.py", False),
        ("test_?.py", "pkg/test_1.py", True),
        ("test_[0-9].py", "pkg/test_x.py", False),
        ("./scripts", "scripts/a.py", True),
        ("scripts/", "x/scripts/a.py", True),
    ],
)
def test_glob_forms(tmp_path, pattern, path, matched):
    assert glob_matches(pattern, str(tmp_path / path), str(tmp_path)) is matched


# --- import cost -----------------------------------------------------------------------------


def test_importing_config_does_not_import_libcst():
    code = "import sys, bcast_lint.config; sys.exit('libcst' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0

"""Configuration: where it is found, what it may say, and which rules it enables for a file.

Standard library only: the CLI imports this before it knows whether any file needs parsing, so it
must not pull in libcst.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bcast_lint.codes import ALL_CODES, OPT_IN_CODES, is_known_selector

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# Ruff's default excludes, plus caches that only hold generated or third-party code.
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

CONFIG_FILE_NAMES = (".bcast-lint.toml", "bcast-lint.toml", "pyproject.toml")
PYPROJECT = "pyproject.toml"
TOOL_TABLE = "bcast-lint"
COMMAND_LINE = "command line"


class ConfigError(Exception):
    """Bad configuration; the message names the file (or the command line) and the key."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("BCL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unsafe_fixes: bool = False
    respect_gitignore: bool = True
    force_exclude: bool = False
    source: str | None = None
    root: str | None = None

    def is_enabled(self, code: str, filename: str) -> bool:
        """Whether `code` is reported in `filename`.

        Like ruff: the most specific selector decides (a longer prefix beats a shorter one, "ALL"
        is the least specific, ignore wins ties), and a matching per-file-ignore always wins. An
        opt-in code (codes.OPT_IN_CODES) is selected only by its full code.
        """
        if any(_specificity(s, code) >= 0 for s in self._file_ignores(filename)):
            return False
        return self._is_selected(code)

    def selection(self) -> tuple[str, ...]:
        """The codes enabled before per-file-ignores, in code order."""
        return self._selection

    @functools.cached_property
    def _selection(self) -> tuple[str, ...]:
        return tuple(code for code in ALL_CODES if self._is_selected(code))

    def enabled_codes(self, filename: str) -> tuple[str, ...]:
        """The codes reported in `filename`, in code order: `is_enabled` for every code at once."""
        ignored = self._file_ignores(filename) if self.per_file_ignores else ()
        return tuple(code for code in self._selection if not any(_specificity(s, code) >= 0 for s in ignored))

    def _is_selected(self, code: str) -> bool:
        selectors = self.select + self.extend_select
        if code in OPT_IN_CODES:  # off unless named in full: "BCL" or "ALL" does not enable it
            selectors = tuple(selector for selector in selectors if selector == code)
        selected = _best_specificity(selectors, code)
        ignored = _best_specificity(self.ignore, code)
        return selected >= 0 and selected > ignored

    def is_excluded(self, path: str) -> bool:
        """Whether `path` itself matches an exclude glob; discovery asks this of each entry."""
        return self._excludes().matches(path, parents=False)

    def is_force_excluded(self, path: str) -> bool:
        """Whether a path named on the command line is skipped: with force-exclude, when it or a
        directory above it matches an exclude glob (pre-commit names every file it checks)."""
        return self.force_exclude and self._excludes().matches(path, parents=True)

    def _excludes(self) -> _GlobSet:
        return _compile_globs(self.exclude + self.extend_exclude, self.root or os.getcwd())

    def _file_ignores(self, filename: str) -> tuple[str, ...]:
        root = self.root or os.getcwd()
        return tuple(
            code
            for pattern, codes in self.per_file_ignores
            if glob_matches(pattern, filename, root)
            for code in codes
        )


def glob_matches(pattern: str, path: str, root: str, *, parents: bool = True) -> bool:
    """Match a ruff-style glob against `path` and, with `parents`, the directories above it.

    A pattern without a slash ("build", "*_pb2.py") matches a single name: the path's own, or
    with `parents` any component below `root`. One with a slash ("tests/fixtures",
    "**/legacy/*.py") is anchored at `root`. `*` and `?` stay within one component, `**` spans
    any number, `{a,b}` is an alternation.
    """
    return _compile_globs((pattern,), root).matches(path, parents=parents)


@dataclass(frozen=True)
class _GlobSet:
    """Globs compiled into one regex for bare names and one for paths anchored at `root`."""

    root: str
    names: re.Pattern[str] | None
    paths: re.Pattern[str] | None

    def matches(self, path: str, *, parents: bool) -> bool:
        absolute = os.path.normpath(os.path.abspath(path))
        if self.names is not None:
            own_name = [os.path.basename(absolute)]
            candidates = _components_below(absolute, self.root) if parents else own_name
            if any(self.names.fullmatch(candidate) for candidate in candidates):
                return True
        if self.paths is not None:
            candidates = _self_and_parents(absolute) if parents else [absolute]
            return any(self.paths.fullmatch(candidate) for candidate in candidates)
        return False


@functools.lru_cache(maxsize=64)
def _compile_globs(patterns: tuple[str, ...], root: str) -> _GlobSet:
    root = os.path.abspath(root)
    stripped = [pattern.rstrip("/") or "/" for pattern in patterns]
    names = [_translate(pattern) for pattern in stripped if "/" not in pattern]
    anchored = [os.path.normpath(os.path.join(_escape_glob(root), p)) for p in stripped if "/" in p]
    return _GlobSet(root, _alternation(names), _alternation([_translate(p) for p in anchored]))


def _alternation(regexes: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{regex})" for regex in regexes)) if regexes else None


def _escape_glob(path: str) -> str:
    return re.sub(r"([*?[{])", r"[\1]", path)


def _self_and_parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def _components_below(path: str, root: str) -> list[str]:
    relative = os.path.relpath(path, root)
    # Directories above the root belong to no project: only the file's own name counts there.
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return [os.path.basename(path)]
    return relative.split(os.sep)


def _translate(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        piece, i = _translate_one(pattern, i)
        out.append(piece)
    return "".join(out)


def _translate_one(pattern: str, i: int) -> tuple[str, int]:
    if pattern.startswith("**/", i):
        return "(?:.*/)?", i + 3
    if pattern.startswith("**", i):
        return ".*", i + 2
    char = pattern[i]
    if char == "*":
        return "[^/]*", i + 1
    if char == "?":
        return "[^/]", i + 1
    if char == "[":
        return _translate_class(pattern, i)
    if char == "{":
        return _translate_alternatives(pattern, i)
    return re.escape(char), i + 1


def _translate_class(pattern: str, i: int) -> tuple[str, int]:
    close = pattern.find("]", i + 2)  # a "]" right after "[" belongs to the class
    if close == -1:
        return re.escape("["), i + 1
    body = pattern[i + 1 : close]
    negate = body[:1] in ("!", "^")
    return "[" + ("^" if negate else "") + _escape_class(body[negate:]) + "]", close + 1


def _translate_alternatives(pattern: str, i: int) -> tuple[str, int]:
    close = pattern.find("}", i + 1)
    if close == -1:
        return re.escape("{"), i + 1
    options = pattern[i + 1 : close].split(",")
    return "(?:" + "|".join(_translate(option) for option in options) + ")", close + 1


def _escape_class(body: str) -> str:
    return body.replace("\\", "\\\\").replace("[", "\\[")


def _specificity(selector: str, code: str) -> int:
    """How closely `selector` names `code`: -1 when it does not select it, 0 for "ALL"."""
    if selector == "ALL":
        return 0
    return len(selector) if code.startswith(selector) else -1


def _best_specificity(selectors: tuple[str, ...], code: str) -> int:
    return max((_specificity(s, code) for s in selectors), default=-1)


def find_config_file(start: str) -> str | None:
    """The nearest configuration file at or above `start` (a file or a directory).

    In each directory `.bcast-lint.toml` comes first, then `bcast-lint.toml`, then
    `pyproject.toml`, which counts only when it has a [tool.bcast-lint] table.
    """
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        found = _config_in(directory)
        if found is not None:
            return found
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _config_in(directory: str) -> str | None:
    for name in CONFIG_FILE_NAMES:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and (name != PYPROJECT or _has_tool_table(candidate)):
            return candidate
    return None


def _has_tool_table(pyproject: str) -> bool:
    text = _read(pyproject)
    # Most pyproject.toml files never mention us; skip parsing those.
    if TOOL_TABLE not in text:
        return False
    return TOOL_TABLE in _tool_tables(_parse(text, pyproject))


def _tool_tables(data: dict) -> dict:
    tool = data.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def load_settings(
    paths: Sequence[str],
    *,
    config_file: str | None = None,
    overrides: Mapping[str, object] = {},
) -> Settings:
    """Settings for a run over `paths`.

    The configuration is `config_file` when given, else the nearest one above the first path
    (stdin or no path: the working directory). `overrides` use the Settings field names and win
    over the file, except that extend_select and extend_exclude add to the file's; a None value
    means "not given".
    """
    path = config_file or find_config_file(_search_start(paths))
    settings = Settings() if path is None else _settings_from_file(path)
    return _apply_overrides(settings, overrides)


def _search_start(paths: Sequence[str]) -> str:
    if not paths or paths[0] == "-":
        return os.getcwd()
    return paths[0]


def _settings_from_file(path: str) -> Settings:
    path = os.path.abspath(path)
    data = _parse(_read(path), path)
    is_pyproject = os.path.basename(path) == PYPROJECT
    table = _tool_tables(data).get(TOOL_TABLE, {}) if is_pyproject else data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TOOL_TABLE}] must be a table")
    values = {_field_name(key, path): _convert(key, value, path) for key, value in table.items()}
    return Settings(**values, source=path, root=os.path.dirname(path))


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from exc


def _parse(text: str, path: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc


def _apply_overrides(settings: Settings, overrides: Mapping[str, object]) -> Settings:
    changes: dict[str, object] = {}
    for name, value in overrides.items():
        if value is None:
            continue
        key = name.replace("_", "-")
        if key not in _CONVERTERS:
            raise ConfigError(f"{COMMAND_LINE}: unknown setting {name!r}")
        converted = _convert(key, value, COMMAND_LINE)
        if name in _EXTENDING:
            converted = getattr(settings, name) + converted
        changes[name] = converted
    return dataclasses.replace(settings, **changes)


def _field_name(key: str, origin: str) -> str:
    if key not in _CONVERTERS:
        known = ", ".join(_CONVERTERS)
        raise ConfigError(f"{origin}: '{key}': unknown key (known keys: {known})")
    return key.replace("-", "_")


def _convert(key: str, value: object, origin: str) -> object:
    return _CONVERTERS[key](value, f"{origin}: '{key}'")


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: expected a list of strings, got {type(value).__name__}")
    for item in value:
        if not isinstance(item, str):
            raise ConfigError(f"{where}: expected a list of strings, found {item!r}")
    return tuple(value)


def _codes(value: object, where: str) -> tuple[str, ...]:
    # Codes are case-insensitive everywhere, as in noqa comments and `bcast-lint rule`.
    codes = tuple(code.upper() for code in _strings(value, where))
    for code in codes:
        if not is_known_selector(code):
            raise ConfigError(f"{where}: unknown rule code or prefix {code!r}")
    return codes


def _boolean(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    return value


def _per_file(value: object, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a table of glob = [codes], got {type(value).__name__}")
    return tuple((glob, _codes(codes, f"{where} {glob!r}")) for glob, codes in value.items())


_CONVERTERS: dict[str, Callable[[object, str], object]] = {
    "select": _codes,
    "ignore": _codes,
    "extend-select": _codes,
    "exclude": _strings,
    "extend-exclude": _strings,
    "per-file-ignores": _per_file,
    "unsafe-fixes": _boolean,
    "respect-gitignore": _boolean,
    "force-exclude": _boolean,
}

_EXTENDING = ("extend_select", "extend_exclude")

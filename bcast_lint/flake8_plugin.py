"""flake8 plugin: the same findings as the CLI, through flake8's noqa and selection.

flake8 hands a plugin 1-based lines and expects 0-based columns, which it prints plus one; the
engine's columns are 1-based, hence the `- 1`. Files LibCST cannot parse are reported as BCL900,
never as a crash of flake8. Opt-in codes (BCL012) are not reported: flake8's `--select BCL` would
turn them on with the rest, while they are meant to be named one by one, which the CLI can do.
"""

from __future__ import annotations

from typing import Iterator

from bcast_lint import __version__


class BcastLintPlugin:
    name = "bcast-lint"
    version = __version__

    def __init__(self, tree, filename: str, lines: list[str]) -> None:
        self._tree = tree  # flake8 parses every file for pyflakes: no need to parse it again
        self._filename = filename
        self._lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from bcast_lint.engine import lint_source, rare_garbage_collection

        source = "".join(self._lines)  # already decoded by flake8, coding cookie and all
        # flake8 applies `# noqa` itself; filtering here too would hide what --disable-noqa shows.
        with rare_garbage_collection():
            result = lint_source(source, self._filename, _by_default, honour_noqa=False, tree=self._tree)
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)


def _by_default(code: str) -> bool:
    from bcast_lint.codes import OPT_IN_CODES

    return code not in OPT_IN_CODES

"""flake8 plugin: the same findings as the CLI, through flake8's noqa and selection.

flake8 hands a plugin 1-based lines and expects 0-based columns, which it prints plus one; the
engine's columns are 1-based, hence the `- 1`. Files LibCST cannot parse are reported as BCL900,
never as a crash of flake8. Opt-in codes (BCL012) are not reported: flake8's `--select BCL` would
turn them on with the rest, while they are meant to be named one by one, which the CLI can do.
Each flake8 process keeps one Project, as each CLI worker does, so calls of the project's own
functions are followed the same way: the import root is found from the file's path, modules
outside the checked paths are read for their summaries.
"""

from __future__ import annotations

from typing import Iterator

from bcast_lint import __version__


_project = None  # this process's module index and summaries, shared by the files it checks


def _shared_project():
    global _project
    if _project is None:
        from bcast_lint.analysis.project import Project

        _project = Project()
    return _project


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
            result = lint_source(source, self._filename, _by_default, honour_noqa=False, tree=self._tree,
                                 project=_shared_project())
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)


def _by_default(code: str) -> bool:
    from bcast_lint.codes import OPT_IN_CODES

    return code not in OPT_IN_CODES

"""flake8 plugin: the same findings as the CLI, through flake8's noqa and selection.

flake8 hands a plugin 1-based lines and expects 0-based columns, which it prints plus one; the
engine's columns are 1-based, hence the `- 1`. Files LibCST cannot parse are reported as BCL900,
never as a crash of flake8. Opt-in codes (BCL012) are not reported: flake8's `--select BCL` would
turn them on with the rest, while they are meant to be named one by one, which the CLI can do.
Each flake8 run keeps one Project in each of its processes, as each CLI worker does, so calls of
the project's own functions are followed the same way: the import root is found from the file's
path, modules outside the checked paths are read for their summaries. The Project is kept on the
run's options (flake8 makes them once per run, and once more in each worker it spawns), so a
second run in the same process starts afresh.
"""

from __future__ import annotations

from typing import Iterator

from bcast_lint import __version__

_PROJECT = "_bcast_lint_project"  # the attribute of flake8's options that holds the run's Project


def _run_project(options):
    """The Project of the flake8 run whose options these are (a plugin made without flake8's
    options checks its file alone)."""
    from bcast_lint.analysis.project import Project

    if options is None:
        return Project()
    project = getattr(options, _PROJECT, None)
    if project is None:
        project = Project()
        setattr(options, _PROJECT, project)
    return project


class BcastLintPlugin:
    name = "bcast-lint"
    version = __version__

    def __init__(self, tree, filename: str, lines: list[str], options=None) -> None:
        self._tree = tree  # flake8 parses every file for pyflakes: no need to parse it again
        self._filename = filename
        self._lines = lines
        self._options = options

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from bcast_lint.engine import lint_source, rare_garbage_collection

        source = "".join(self._lines)  # already decoded by flake8, coding cookie and all
        # flake8 applies `# noqa` itself; filtering here too would hide what --disable-noqa shows.
        with rare_garbage_collection():
            result = lint_source(source, self._filename, _by_default, honour_noqa=False, tree=self._tree,
                                 project=_run_project(self._options))
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)


def _by_default(code: str) -> bool:
    from bcast_lint.codes import OPT_IN_CODES

    return code not in OPT_IN_CODES

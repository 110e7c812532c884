"""`# noqa` and `# noqa: BCL001,BCL002` comments: read the way flake8 reads them, and written by
`--add-noqa`, with one pattern for both."""

from __future__ import annotations

import re
from typing import Iterable, Optional

from bcast_lint.model import Edit, Finding
from bcast_lint.source import Source

# flake8's own pattern: codes are separated by commas and/or whitespace after an optional colon.
_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE
)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


def suppressed_codes(line: str):
    """None when the line has no noqa, "all" for a bare `# noqa`, else the set of codes."""
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return "all"
    return {code.upper() for code in _CODE.findall(codes)}


def is_suppressed(code: str, line: str) -> bool:
    codes = suppressed_codes(line)
    if codes is None:
        return False
    return codes == "all" or any(code.startswith(prefix) for prefix in codes)


def noqa_edits(source: Source, findings: Iterable[Finding]) -> list[Edit]:
    """The edits that give each line with a finding a `# noqa: CODE` comment, merged with the
    line's own noqa list. Lines that end inside a string or after a backslash are left alone:
    a comment there would change the code."""
    codes_by_line: dict[int, set[str]] = {}
    for finding in findings:
        codes_by_line.setdefault(finding.line, set()).add(finding.code)
    commentable = _commentable_lines(source)
    return [edit for number, codes in sorted(codes_by_line.items())
            if 0 < number <= source.line_count and (commentable is None or number in commentable)
            for edit in [_noqa_edit(number, source.line(number), codes)] if edit is not None]


def _noqa_edit(number: int, line: str, codes: set[str]) -> Optional[Edit]:
    existing = _NOQA.search(line)
    start = end = len(line)
    if existing is not None:
        if not existing.group("codes"):
            return None  # a bare `# noqa` already silences every code
        codes = codes | {code.upper() for code in _CODE.findall(existing.group("codes"))}
        start, end = len(line[: existing.start()].rstrip()), existing.end()
    return Edit(number, start + 1, number, end + 1, f"  # noqa: {', '.join(sorted(codes))}")


def _commentable_lines(source: Source) -> Optional[set[int]]:
    """The lines whose end is outside any string and not after a backslash. None when the file
    cannot be tokenized (then every line is taken)."""
    import io
    import tokenize

    # One readline call per line of the Source, each ending in "\n": the tokenizer then numbers
    # lines as the Source does, whatever the file's line endings.
    lines = io.StringIO("".join(line.rstrip("\r\n") + "\n" for line in source.lines()))
    try:
        tokens = list(tokenize.generate_tokens(lines.readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return {token.start[0] for token in tokens if token.type in (tokenize.NEWLINE, tokenize.NL)}

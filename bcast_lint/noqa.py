"""`# noqa` and `# noqa: BCL001,BCL002` comments, read the way flake8 reads them."""

from __future__ import annotations

import re

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

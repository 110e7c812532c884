"""One model of a file's text: its bytes, how they decode, where its lines start.

Only `\\r\\n`, `\\r` and `\\n` end a line, as for Python's tokenizer, LibCST and ruff's
`ruff_source_file`. `str.splitlines` also breaks on `\\x0c`, `\\x1c`-`\\x1e`, `\\x85`, U+2028 and
U+2029, so its line numbers disagree with every position the parser reports on files holding
them: nothing else in bcast-lint splits lines or decodes a file's bytes.

Edits are applied to the bytes: every byte outside an edit is kept as it was read (encoding, BOM,
line endings, odd characters), and only an edit's own content is encoded.
"""

from __future__ import annotations

import bisect
import itertools

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

if TYPE_CHECKING:
    from bcast_lint.model import Edit

_LINE_END = re.compile(r"\r\n|\r|\n")
_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)?")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Source:
    data: bytes  # the file as read
    text: str  # `data` decoded, without its BOM
    encoding: str  # the codec of `text` ("utf-8" for a file with a BOM)
    bom: bytes  # the UTF-8 BOM that precedes `text` in `data`, or b""
    line_starts: tuple[int, ...]  # offset in `text` of each line's first character
    # The original number of each line of the reduced text LibCST parses (see reduce.py), or None
    # when LibCST parses the whole file.
    parsed_lines: Optional[tuple[int, ...]] = None

    @classmethod
    def from_bytes(cls, data: bytes) -> "Source":
        """Decode as Python would (coding cookie, BOM). Bytes that do not decode raise
        UnicodeDecodeError, or SyntaxError from the cookie's lines (an unknown codec, say)."""
        import tokenize  # only for files that pass the pre-filter

        encoding = tokenize.detect_encoding(_first_two_lines(data))[0]
        bom = _BOM if encoding == "utf-8-sig" else b""
        codec = "utf-8" if bom else encoding
        text = data[len(bom):].decode(codec)
        return cls(data, text, codec, bom, _line_starts(text))

    @classmethod
    def from_text(cls, text: str) -> "Source":
        """Text already decoded (flake8 hands plugins lines): taken as UTF-8."""
        return cls(text.encode("utf-8", "surrogatepass"), text, "utf-8", b"", _line_starts(text))

    # -- lines -----------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its line ending; "" past the end of the file."""
        if not 0 < number <= self.line_count:
            return ""
        start = self.line_starts[number - 1]
        end = self.line_starts[number] if number < self.line_count else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def lines(self) -> list[str]:
        """Every line with its line ending (the last one may have none)."""
        starts = self.line_starts
        return [self.text[start:end] for start, end in zip(starts, (*starts[1:], len(self.text)))]

    def byte_lines(self) -> list[bytes]:
        """Every line of `data` with its line ending; the BOM stays on the first. An empty file
        has none."""
        lines = [line.encode(self.encoding) for line in self.lines()]
        return [line for line in (self.bom + lines[0], *lines[1:]) if line]

    @property
    def newline(self) -> str:
        """The file's first line ending, which inserted lines use; "\\n" when it has none."""
        found = _LINE_END.search(self.text)
        return found.group() if found else "\n"

    # -- positions -------------------------------------------------------------------------
    def offset(self, line: int, column: int) -> int:
        """The offset in `text` of a 1-based line and column (columns count characters)."""
        if line > self.line_count:
            return len(self.text)
        return self.line_starts[line - 1] + column - 1

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of an offset in `text` (the inverse of `offset`)."""
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def nul_position(self) -> Optional[tuple[int, int]]:
        """Where the first NUL character is. Python refuses such a file without a position
        (3.11 raises ValueError) and LibCST says 1:1, so the position is found here."""
        found = self.text.find("\0")
        return None if found < 0 else self.position(found)

    def parsed(self, line_numbers: Sequence[int]) -> "Source":
        """This source, for which LibCST parses the reduced text whose lines have these numbers."""
        return replace(self, parsed_lines=tuple(line_numbers))

    def original_line(self, parsed_line: int) -> int:
        """The number in this file of line `parsed_line` of the text LibCST parsed."""
        numbers = self.parsed_lines
        if numbers is None:
            return parsed_line
        # LibCST's end of file is one line past the last one.
        return numbers[parsed_line - 1] if parsed_line <= len(numbers) else numbers[-1] + parsed_line - len(numbers)

    # -- edits -----------------------------------------------------------------------------
    def apply(self, edits: Iterable["Edit"]) -> bytes:
        """`data` with `edits` (non-overlapping) applied; "\\n" in their content becomes the
        file's line ending. Raises UnicodeEncodeError when content does not fit the encoding."""
        newline = self.newline
        pieces: list[bytes] = [self.bom]
        kept_to = 0  # the character offset up to which the text is in `pieces`
        kept_bytes = len(self.bom)  # and its byte offset in `data`
        # In the file's order, one pass; two insertions at one place go last listed first.
        ordered = sorted(enumerate(edits), key=lambda pair: (pair[1].line, pair[1].column, -pair[0]))
        for _, edit in ordered:
            start, end = self.offset(edit.line, edit.column), self.offset(edit.end_line, edit.end_column)
            start_bytes = kept_bytes + len(self.text[kept_to:start].encode(self.encoding))
            pieces += [self.data[kept_bytes:start_bytes], edit.content.replace("\n", newline).encode(self.encoding)]
            kept_to, kept_bytes = end, start_bytes + len(self.text[start:end].encode(self.encoding))
        pieces.append(self.data[kept_bytes:])
        return b"".join(pieces)


def _line_starts(text: str) -> tuple[int, ...]:
    if "\r" in text:
        return (0, *(match.end() for match in _LINE_END.finditer(text) if match.end() < len(text)))
    # Only "\n" ends a line here: splitting is many times faster than a regular expression.
    parts = text.split("\n")
    starts = tuple(itertools.accumulate(map((1).__add__, map(len, parts[:-1])), initial=0))
    return starts[:-1] if len(starts) > 1 and not parts[-1] else starts


def _first_two_lines(data: bytes):
    """A readline for tokenize.detect_encoding, which reads at most two lines for the cookie.
    io.BytesIO's readline would end lines at b"\\n" only, and read a CR-only file as one line."""
    first = _BYTE_LINE.match(data)
    second = _BYTE_LINE.match(data, first.end())
    lines = iter((first.group(), second.group()))
    return lambda: next(lines, b"")

"""The data that crosses module boundaries: findings, fixes and their edits.

Lines and columns are 1-based, as printed to users (flake8's plugin API subtracts one itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based positions (end exclusive) with `content`."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    @classmethod
    def from_dict(cls, data: dict) -> "Edit":
        start, end = data["location"], data["end_location"]
        return cls(start["row"], start["column"], end["row"], end["column"], data["content"])

    def as_dict(self) -> dict:
        return {
            "content": self.content,
            "location": {"row": self.line, "column": self.column},
            "end_location": {"row": self.end_line, "column": self.end_column},
        }


@dataclass(frozen=True)
class Fix:
    applicability: str  # SAFE or UNSAFE
    message: str
    edits: tuple[Edit, ...]

    @classmethod
    def from_dict(cls, data: dict) -> "Fix":
        edits = tuple(Edit.from_dict(edit) for edit in data["edits"])
        return cls(data["applicability"], data["message"], edits)

    def as_dict(self) -> dict:
        return {
            "applicability": self.applicability,
            "message": self.message,
            "edits": [edit.as_dict() for edit in self.edits],
        }


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    filename: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Fix | None = field(default=None, compare=False)
    help: str | None = field(default=None, compare=False)  # the remedy; `message` says what is wrong
    # Why the rule's fix is not offered: the fixer would reject it (see fixer.py).
    fix_rejected: str | None = field(default=None, compare=False)

    @classmethod
    def from_dict(cls, data: dict) -> "Finding":
        fix = Fix.from_dict(data["fix"]) if data.get("fix") else None
        return cls(data["code"], data["message"], data["filename"], data["line"], data["column"],
                   data["end_line"], data["end_column"], fix, data.get("help"), data.get("fix_rejected"))

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "filename": self.filename,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": self.fix.as_dict() if self.fix else None,
            "help": self.help,
            **({"fix_rejected": self.fix_rejected} if self.fix_rejected else {}),
        }


@dataclass(frozen=True)
class FileResult:
    """What linting one file produced. `error` is set when the file could not be read at all."""

    filename: str
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    analysed: int = 0  # collective calls the rules saw (including calls of collective-running helpers)
    unresolved: tuple[tuple[int, str], ...] = ()  # (line, called name): named like a collective, not resolved
    dependencies: tuple[tuple[str, str], ...] = ()  # (path, content digest) of other modules read
    frameworks: tuple[tuple[str, int, int], ...] = ()  # (framework, analysed, unresolved) per framework

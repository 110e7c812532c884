"""What every rule is: a code, documentation, examples, and a check over a ModuleAnalysis."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import ClassVar, Iterator, Optional

import libcst as cst

from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.codes import RULES_BY_CODE
from bcast_lint.model import Fix


@dataclass(frozen=True)
class Report:
    """A rule's verdict on one node; the engine turns it into a positioned Finding.

    `message` says what is wrong in one sentence; `help` says what to do about it.
    """

    node: cst.CSTNode
    message: str
    fix: Optional[Fix] = None
    help: Optional[str] = None


# The VALID/INVALID examples on each rule are short; they run after these imports.
EXAMPLE_PRELUDE = """\
import os
import torch
import torch.distributed as dist
from accelerate import Accelerator
from accelerate.utils import broadcast, broadcast_object_list, gather
accelerator = Accelerator()
rank = dist.get_rank()
local_rank = int(os.environ["LOCAL_RANK"])
"""


def _dedented(code: str) -> str:
    """A case written as an indented block that starts on a new line, dedented as Fixit does."""
    return textwrap.dedent(code).strip("\n") if code.startswith("\n") else code


@dataclass(frozen=True)
class Valid:
    code: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _dedented(self.code))


@dataclass(frozen=True)
class Invalid:
    """Code that must be flagged once, as Fixit's Invalid: the finding's message, its range
    (line, column, end line, end column: 1-based, end exclusive, counted in `code` without the
    prelude), and `expected_replacement`, what `--fix --unsafe-fixes` gives (None: no fix)."""

    code: str
    expected_message: Optional[str] = None
    range: Optional[tuple[int, int, int, int]] = None
    expected_replacement: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _dedented(self.code))


class Rule:
    """Base class. A subclass's docstring is its documentation, in Markdown, with the sections
    What it does / Why is this bad? / Example / Use instead / Fix safety."""

    code: ClassVar[str]
    VALID: ClassVar[tuple[Valid, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()

    @classmethod
    def name(cls) -> str:
        return RULES_BY_CODE[cls.code].name

    @classmethod
    def documentation(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return first_sentence_of_what_it_does(cls.documentation())

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        raise NotImplementedError


def first_sentence_of_what_it_does(documentation: str) -> str:
    """The first sentence under 'What it does': a rule's summary.

    A first paragraph ending in a colon leads into a list: that lead-in is the sentence. One
    that ends mid-sentence goes on through the list items that follow, to the full stop.
    """
    match = re.search(r"## What it does\s+(.+?)(?:\n##|$)", documentation, re.S)
    section = match.group(1) if match else ""
    lead_in = " ".join(section.split("\n\n", 1)[0].split())
    if lead_in.endswith(":"):
        return lead_in[:-1] + "."
    return _first_sentence(" ".join(_LIST_MARK.sub("", section).split()))


_LIST_MARK = re.compile(r"^\s*[-*] ", re.M)
# A code span, or a full stop that ends a sentence; a stop inside `code` ends nothing.
_CODE_OR_STOP = re.compile(r"`[^`]*`|\.(?=\s)")


def _first_sentence(text: str) -> str:
    stop = next((m for m in _CODE_OR_STOP.finditer(text) if m.group() == "."), None)
    return text[: stop.end()] if stop else text

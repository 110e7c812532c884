"""A byte-level test that decides whether a file is worth parsing at all.

Parsing dominates the cost of linting, and almost no file in a codebase calls a collective. Every
rule needs a call to a known collective, whose name appears in the file's text either at the call
or in the import that aliases it. Rules about collectives other than broadcasts also need a rank
condition, all of whose spellings contain "rank" or "process".
"""

from __future__ import annotations

import re

from bcast_lint.analysis.apis import CALL_WORDS

_BROADCAST = re.compile(rb"broadcast")
_COLLECTIVE = re.compile(rb"|".join(re.escape(word.encode()) for word in sorted(CALL_WORDS)))
_RANK_WORDS = re.compile(rb"rank|process")


def may_have_findings(source: bytes) -> bool:
    if _BROADCAST.search(source):
        return True
    return bool(_COLLECTIVE.search(source)) and bool(_RANK_WORDS.search(source))

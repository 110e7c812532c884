"""A byte-level test that decides whether a file is worth parsing at all.

Parsing dominates the cost of linting, and almost no file in a codebase calls a collective. Every
rule needs a call to a known collective, written as a call (`broadcast(`) or imported under an
alias (`broadcast as bc`), in a file that names the API it comes from (torch.distributed,
accelerate, deepspeed, or an accelerator). Rules about collectives other than broadcasts also
need a rank condition, and every spelling of one contains one of RANK_WORDS.

Plain substring searches run first: they are much faster than the regular expressions, which
only confirm the rare files that contain a word.
"""

from __future__ import annotations

import re

from bcast_lint.analysis.apis import CALL_WORDS

_OTHER_WORDS = tuple(sorted(word for word in CALL_WORDS if "broadcast" not in word))
_API_WORDS = (b"distributed", b"accelerat", b"deepspeed", b"wait_for_everyone", b"gather_for_metrics")
RANK_WORDS = (b"rank", b"process_index", b"main_process", b"last_process", b"on_process",
              b"process_zero")


def _called(words) -> re.Pattern:
    names = b"|".join(re.escape(word.encode()) for word in words)
    return re.compile(rb"\b(?:" + names + rb")\s*\(|\b(?:" + names + rb")\s+as\s")


_BROADCAST_CALL = _called(("broadcast", "broadcast_object_list"))
_OTHER_CALL = _called(_OTHER_WORDS)


def may_have_findings(source: bytes) -> bool:
    if not any(word in source for word in _API_WORDS):
        return False
    if b"broadcast" in source and _BROADCAST_CALL.search(source):
        return True
    return (any(word in source for word in RANK_WORDS)
            and any(word.encode() in source for word in _OTHER_WORDS)
            and bool(_OTHER_CALL.search(source)))

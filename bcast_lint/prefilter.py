"""A byte-level test that decides whether a file is worth parsing at all.

Parsing dominates the cost of linting, and almost no file in a codebase calls a collective. Every
rule needs a call to a known collective, written as a call (`broadcast(`) or imported under an
alias (`broadcast as bc`), in a file that names the API it comes from (torch.distributed,
accelerate, deepspeed, an accelerator, or a framework of the map: lightning, ignite, mmengine, ...).
A framework's method names (`log(`, `barrier(`) count only in a file that names the framework. Rules about collectives other than broadcasts also
need a rank condition, and every spelling of one contains one of RANK_WORDS. The words are those of
every text scan (analysis.words).

Plain substring searches run first, and each regular expression starts with its word's literal
text, which `re` finds as fast as a substring search; an alternation of words is many times
slower.
"""

from __future__ import annotations

import re
from typing import Callable

from bcast_lint.analysis import words
from bcast_lint.analysis.apis import (MAPPED_PROPERTY_NAMES, STEERS_TRAINER, STEERS_TRAINER_WORDS, TRAINING_STEP,
                                      gated_call_words)
from bcast_lint.analysis.gradients import gradients_unsynced, reads_gradients
from bcast_lint.analysis.logged_metrics import METRICS_DICTIONARIES
from bcast_lint.analysis.words import BROADCAST_WORDS, GATHER_WORDS, names_rank

# Public: docs.py writes the pre-filter's description from these very lists.
OTHER_CALL_WORDS = words.OTHER_COLLECTIVE_WORDS
API_WORDS = words.encoded(words.API_WORDS)
RANK_WORDS = words.encoded(words.RANK_WORDS)


_IDENTIFIER_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _called(word: str) -> re.Pattern:
    """`word(` or `word as`, found by its literal start (fast); the byte before is checked apart."""
    return re.compile(re.escape(word.encode()) + rb"(?:\s*\(|\s+as\s)")


_BROADCAST_CALLS = tuple(_called(word) for word in BROADCAST_WORDS)
_GATHER_CALLS = tuple(_called(word) for word in GATHER_WORDS)
_OTHER_CALLS = tuple((word.encode(), _called(word)) for word in OTHER_CALL_WORDS)


_TRAINING_STEP = re.compile(TRAINING_STEP.encode())
_PARTIAL_COLLECTIVE = re.compile(words.WRAPPED_COLLECTIVE.encode())
_STEERS_TRAINER = re.compile(STEERS_TRAINER.encode())
_STEERS_TRAINER_WORDS = words.encoded(STEERS_TRAINER_WORDS)
_METRICS_DICTIONARIES = words.encoded(METRICS_DICTIONARIES)

SKIP, PARSE, IF_HELPERS = "skip", "parse", "if-helpers"


def verdict(source: bytes) -> str:
    """PARSE when the file calls a collective; IF_HELPERS when it has a rank condition but calls
    no collective of its own, so it matters only if it calls a project function that runs one
    (analysis.project.Project.imports_collective_helper decides); SKIP otherwise."""
    if not worth_a_look(source):
        return SKIP
    if b"broadcast" in source and any(_is_called(source, call) for call in _BROADCAST_CALLS):
        return PARSE
    if _names_a_lightning_step(source) and b"lightning" in source and _TRAINING_STEP.search(source):
        return PARSE  # what it returns goes through the Trainer's DDP backward (BCL011)
    if _wraps_own_module(source):
        return PARSE  # a `forward` that skips a submodule on some steps (BCL011)
    if _dispatches_an_iterable(source):
        return PARSE  # process 0 draws and joins the batches of a collator of its own (BCL015)
    if b"sync_dist" in source and any(word in source for word in _METRICS_DICTIONARIES):
        return PARSE  # a read of the trainer's metrics syncs those logged with sync_dist (BCL011)
    if b"gather" in source and any(_is_called(source, call, words.indexing_gather) for call in _GATHER_CALLS):
        return PARSE
    if not names_rank(source):
        # A path every rank checks and one of them writes parts the ranks without a rank word; in
        # a script, so may any value of each process's own (its shard's loss before a `break`).
        checks_files = _checks_files(source) or _is_script(source) or _averages_gradients_by_hand(source)
        calls = (*_OTHER_CALLS, *_gated_calls(source)) if _is_script(source) else _OTHER_CALLS
        if checks_files and any(word in source and _is_called(source, call) for word, call in calls):
            return PARSE
        return SKIP
    if any(word in source and _is_called(source, call) for word, call in (*_OTHER_CALLS, *_gated_calls(source))):
        return PARSE
    if b"partial(" in source and _PARTIAL_COLLECTIVE.search(source):
        return PARSE  # `functools.partial(dist.all_reduce, ...)`: calling it runs the collective
    if any(word in source for word in _STEERS_TRAINER_WORDS) and (b"transformers" in source or b"lightning" in source) \
            and _STEERS_TRAINER.search(source):
        return PARSE  # a callback's control flag, a prediction_step override: the process's own Trainer
    return IF_HELPERS


def worth_a_look(source: bytes) -> bool:
    """The cheap first steps, substring tests only: the file names a distributed API, and a
    broadcast, a gather, a rank, a Lightning training step, a file check, a script's main or
    gradients averaged by hand; or it
    names DDP and defines a `forward`. Most files fail them; for the others, a run with a cache looks the file up before
    the costlier steps."""
    return any(word in source for word in API_WORDS) and (
        b"broadcast" in source or b"gather" in source or names_rank(source) or _names_a_lightning_step(source)
        or _checks_files(source) or _is_script(source) or _averages_gradients_by_hand(source)) \
        or _wraps_own_module(source) or _dispatches_an_iterable(source)


def _averages_gradients_by_hand(source: bytes) -> bool:
    """A backward no wrapper averages, and a read of the gradients: a test of them before the
    user's all-reduce parts the ranks without a rank word (analysis.gradients)."""
    return reads_gradients(source) and gradients_unsynced(source)


_FILE_CHECK_WORDS = (b"exists(", b"isfile(", b"isdir(")


def _checks_files(source: bytes) -> bool:
    return any(word in source for word in _FILE_CHECK_WORDS)


def _wraps_own_module(source: bytes) -> bool:
    """The file names DDP and defines a `forward`: it may wrap a module of its own."""
    return b"DistributedDataParallel" in source and b"def forward(" in source


def _is_script(source: bytes) -> bool:
    """A program run as a script (`if __name__ == "__main__":`): a training script's own values
    part the ranks without any rank word (a break on its validation loss)."""
    return b"__main__" in source and b"__name__" in source


def _dispatches_an_iterable(source: bytes) -> bool:
    """The file hands an IterableDataset of its own and a collator to a Trainer or a loader, where
    accelerate dispatches the batches from process 0."""
    return b"IterableDataset" in source and (b"data_collator" in source or b"collate_fn" in source) \
        and (b"Trainer(" in source or b"prepare(" in source)


def _names_a_lightning_step(source: bytes) -> bool:
    return b"training_step" in source or b"on_train_batch_start" in source


def may_have_findings(source: bytes) -> bool:
    return verdict(source) == PARSE


def _gated_calls(source: bytes) -> tuple:
    return tuple((word.encode(), _read(word) if word in MAPPED_PROPERTY_NAMES else _called(word))
                 for word in gated_call_words(source))


def _read(word: str) -> re.Pattern:
    """`.word` not followed by more of a name: a property read (`trainer.log_dir`)."""
    return re.compile(rb"(?<=\.)" + re.escape(word.encode()) + rb"(?!\w)")


def _is_called(source: bytes, call: re.Pattern, unless: Callable[[bytes, re.Match], bool] | None = None) -> bool:
    """Whether `call` matches where the word starts a name (not `my_broadcast(`), and is not a
    match `unless` rejects."""
    return any((match.start() == 0 or source[match.start() - 1] not in _IDENTIFIER_BYTES)
               and not (unless and unless(source, match))
               for match in call.finditer(source))

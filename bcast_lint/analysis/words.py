"""The text scans: whether a file's bytes or a function's text names a distributed API, calls a
collective or names a rank.

The pre-filter, the project index, the engine's cut, the file context and the summaries all
decide from text before (or instead of) a parse. They read these scans, built here from the
API catalogue's lists (analysis.apis), so they agree on what a collective and a rank look like:
a word added to the catalogue reaches every scan at once. Each scan takes `bytes` or `str`.
"""

from __future__ import annotations

import functools
import re
from typing import Union

from bcast_lint.analysis.apis import API_TEXT_WORDS, CALL_WORDS, DATA_LOOP_WORDS, RANK_TEXT_WORDS, gated_call_words

Text = Union[bytes, str]

COLLECTIVE_WORDS = CALL_WORDS  # called under their own name: `broadcast(`, `.all_reduce (`
BROADCAST_WORDS = ("broadcast", "broadcast_object_list")
# A gather goes wrong without any rank condition where what it gathers has a data-dependent
# length (`gather(x[mask])`, `gather(model.generate(...))`: BCL015).
GATHER_WORDS = ("gather", "all_gather", "all_gather_into_tensor", "gather_for_metrics")
OTHER_COLLECTIVE_WORDS = tuple(sorted(word for word in COLLECTIVE_WORDS if "broadcast" not in word))
RANK_WORDS = RANK_TEXT_WORDS  # every spelling of a rank condition contains one
API_WORDS = API_TEXT_WORDS  # a file that runs a collective names one of these


def encoded(words) -> tuple[bytes, ...]:
    return tuple(word.encode() for word in words)


# Most rank words contain "process", which most files lack: one test of it skips them all.
_PROCESS = {str: "process", bytes: b"process"}
_RANK_FORMS = {kind: (tuple(w for w in forms if _PROCESS[kind] not in w), tuple(w for w in forms if _PROCESS[kind] in w))
               for kind, forms in ((str, RANK_WORDS), (bytes, encoded(RANK_WORDS)))}
_COLLECTIVE_FORMS = {str: tuple(sorted(COLLECTIVE_WORDS)), bytes: encoded(sorted(COLLECTIVE_WORDS))}


def names_rank(text: Text) -> bool:
    """Whether one of RANK_WORDS occurs (substring tests), or a loop over a rank's own data."""
    others, processes = _RANK_FORMS[type(text)]
    return any(word in text for word in others) or (
        _PROCESS[type(text)] in text and any(word in text for word in processes)) or loops_over_data(text)


def tests_rank(test: str) -> bool:
    """Whether a test's text names the rank, not only a collection of ranks (`if DEBUG_RANKS:`
    holds or fails alike on every process; `if rank in DEBUG_RANKS:` does not)."""
    return names_rank(_RANK_COLLECTIONS.sub("", test))


_RANK_COLLECTIONS = re.compile(r"\w*ranks\b", re.IGNORECASE)


# A loop over a rank's own share of the data (analysis.divergence's DATA: a loss, a NaN check):
# `for batch in train_loader:`. A pattern, not a word: "loader" is in most training code.
_DATA_LOOP = r"\bfor\b[^\r\n]*\bin\b[^\r\n]*(?:" + "|".join(DATA_LOOP_WORDS) + ")"
_DATA_LOOP_FORMS = {str: (DATA_LOOP_WORDS, re.compile(_DATA_LOOP)),
                    bytes: (encoded(DATA_LOOP_WORDS), re.compile(_DATA_LOOP.encode()))}


def loops_over_data(text: Text) -> bool:
    """Whether the text loops over a loader or a rank's batches (substring tests first)."""
    loop_words, pattern = _DATA_LOOP_FORMS[type(text)]
    return any(word in text for word in loop_words) and pattern.search(text) is not None


# Seeding the process's random generators with the rank (`torch.manual_seed(seed + rank)`,
# `set_seed(seed, device_specific=True)`, which adds the process index): every draw from them
# differs between ranks (analysis.divergence's RANDOM). A dedicated `torch.Generator()` is not one.
_GLOBAL_SEEDING = r"(?<![\w.])(?:torch\.(?:cuda\.)?manual_seed(?:_all)?|random\.seed|np\.random\.seed|numpy\.random\.seed" \
                  r"|set_seed|seed_everything)[ \t]*\(([^)\r\n]*)"
_SEEDING_FORMS = {str: re.compile(_GLOBAL_SEEDING), bytes: re.compile(_GLOBAL_SEEDING.encode())}
_PER_RANK = {str: ("rank", "process_index", "device_specific=True", "workerseed"),
             bytes: (b"rank", b"process_index", b"device_specific=True", b"workerseed")}
# Draws from the process's generators: torch's, Python's `random`, numpy's legacy global state.
DRAW_WORDS = ("rand(", "randn(", "randint(", "randperm(", "bernoulli(", "multinomial(", "random(", "uniform(",
              "choice(", "shuffle(", "sample(", "normal(")


def seeds_per_rank(text: Text) -> bool:
    """Whether the text seeds the process's random generators with a value of the rank."""
    seed_word = "seed" if isinstance(text, str) else b"seed"
    return seed_word in text and any(word in match.group(1) for match in _SEEDING_FORMS[type(text)].finditer(text)
                                     for word in _PER_RANK[type(text)])


# Python's `random` and NumPy's global generator are seeded by each process from the OS, unlike
# torch's default generator (a fixed seed); frameworks' seeding helpers seed all three.
_SEEDS_EVERY_GENERATOR = ("seed_everything(", "set_seed(", "enable_full_determinism(")
_SEEDS = {"random": re.compile(r"(?<![\w.])random\.seed\("),
          "numpy.random": re.compile(r"(?<![\w])(?:np|numpy)\.random\.seed\(")}


def unseeded_generators(text: str) -> frozenset[str]:
    """The global generators ("random", "numpy.random") a script (it runs under `__main__`) never
    seeds: each process draws its own values from them. A library's draws are left alone, since
    whoever runs it may seed them alike on every rank."""
    if "__main__" not in text or any(word in text for word in _SEEDS_EVERY_GENERATOR):
        return frozenset()
    return frozenset(module for module, seeding in _SEEDS.items() if not seeding.search(text))


# What the calls of divergence's clocks contain: a helper that reads one returns each process's own
# value (`run-20261206-214455-123456`), so it is summarised as a helper that tests the rank is.
CLOCK_WORDS = ("time.time", "time_ns", "perf_counter", "monotonic", ".now(", "utcnow", "gethostname", "getpid")


def reads_clock(text: str) -> bool:
    return any(word in text for word in CLOCK_WORDS)


def mentions_collective(text: Text) -> bool:
    """Whether a word named like a collective occurs at all (substring tests only)."""
    return any(word in text for word in _COLLECTIVE_FORMS[type(text)])


def calls_collective(text: Text, gated: frozenset = frozenset()) -> bool:
    """Whether the text calls a word named like a collective (`broadcast(`, `.gather (`), or one
    of the `gated` words (apis.GATED_CALL_WORDS that count where the text is)."""
    return _calls_named(text) or _calls_gated(text, gated)


def names_collective(text: Text) -> bool:
    """calls_collective, the gated words counting where the text itself names their module
    (`dcp.save(` in a text that names torch.distributed.checkpoint)."""
    return _calls_named(text) or _calls_gated(text, gated_call_words(text))


def _calls_named(text: Text) -> bool:
    # Substring tests first: one alternation over a large module is slow (see prefilter.py).
    return mentions_collective(text) and call_pattern(COLLECTIVE_WORDS, type(text)).search(text) is not None


def _calls_gated(text: Text, gated: frozenset) -> bool:
    return bool(gated) and call_pattern(gated, type(text)).search(text) is not None


@functools.lru_cache(maxsize=None)
def call_pattern(words: frozenset, kind: type) -> re.Pattern:
    """`save(`, `.load (`: a call of one of `words`, in text (`str`) or bytes; or one wrapped for a
    later call, `functools.partial(dist.all_reduce, ...)`."""
    alternatives = "|".join(sorted(map(re.escape, words)))
    pattern = rf"(?<![\w])(?:{alternatives})\s*\(|{PARTIAL_OF}(?:{alternatives})(?!\w)"
    return re.compile(pattern if kind is str else pattern.encode())


# `partial(` then the wrapped function's dotted name, up to its last part.
PARTIAL_OF = r"(?<![\w])partial\(\s*(?:\w+\s*\.\s*)*"
# `functools.partial(dist.all_reduce, ...)`: a collective wrapped for a later call.
WRAPPED_COLLECTIVE = PARTIAL_OF + "(?:" + "|".join(map(re.escape, sorted(COLLECTIVE_WORDS))) + r")(?!\w)"


# `bc` in `from accelerate.utils import broadcast as bc`.
COLLECTIVE_ALIAS = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(COLLECTIVE_WORDS))) + r")\s+as\s+([^\s,;()\\#]+)")


# Calls that register a hook (analysis.hooks.REGISTRATIONS) or defer a call of a function
# (analysis.hooks.DEFERRALS): the cut keeps them where they name a function that may run a collective.
HOOK_REGISTRATIONS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_hook",
    "register_post_accumulate_grad_hook",
})
DEFERRING_CALLS = frozenset({"callback", "register", "finalize"})


_ANY_GATHER = re.compile(rb"(?<!\w)gather\s*\(")


# torch's functions that make a new tensor, outside any autograd graph: a loss returned as one
# reaches no parameter (the BCL011 rule types the calls; the cut keeps `return torch.zeros(` lines).
NEW_TENSOR_FUNCTIONS = frozenset({"tensor", "zeros", "ones", "full", "as_tensor", "scalar_tensor", "zeros_like",
                                  "ones_like", "empty"})


def gathers_only_index(text: str) -> bool:
    """Whether every `gather(` call in `text` indexes (indexing_gather): no gather collective."""
    encoded = text.encode()
    return all(indexing_gather(encoded, match) for match in _ANY_GATHER.finditer(encoded))


_INDEX_ARGUMENT = re.compile(rb"\s*(?:-?\d|dim\s*=)")


def indexing_gather(source: bytes, match: re.Match) -> bool:
    """Indexing, not the collective: `torch.gather(x, 1, index)`, `x.gather(-1, index)`,
    `x.gather(dim=1, ...)` (a collective's first argument is what it gathers). Half the files of
    the benchmark corpus that reached the parse reached it for these only."""
    start = match.start()
    if source[max(0, start - 6):start] == b"torch.":
        return True
    return source[start - 1:start] == b"." and _INDEX_ARGUMENT.match(source, match.end()) is not None

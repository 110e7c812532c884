"""Cut out the functions and classes that cannot hold a finding, before LibCST sees the file.

LibCST's parser and visitors cost far more than CPython's `ast`, and in a large module the
broadcast usually sits in one function of hundreds. `ast` finds the top-level statements (and
the methods of top-level classes) whose text names no collective; each is replaced by a one-line
stub and its other lines are dropped; a class the kept code constructs is kept whole. A kept class keeps its `__init__`, setup methods
(apis.SETUP_METHOD) and properties, and the methods that assign an attribute of `self` named on a collective's
line: another method may broadcast what they assign. Every kept line keeps its text and columns, and
`Reduced.line_numbers` maps it back to its number in the original file (`Source.parsed` keeps the
map), so findings, fixes and noqa comments refer to the original. Imports and other module-level statements are always kept:
they decide what names mean.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from bcast_lint.analysis.apis import (FORWARD_RUNS_COLLECTIVES, MAPPED_PROPERTY_NAMES, MUTATORS, OWN_SAMPLER,
                                      LEVEL_SETTER_WORDS, LEVEL_SETTERS, PER_BATCH_HOOKS, SETUP_METHOD, SHARDING_WORDS,
                                      STEERS_TRAINER, STEERS_TRAINER_WORDS, TRAINING_STEP, gated_call_words)
from bcast_lint.analysis.logged_metrics import METRICS_DICTIONARIES
from bcast_lint.analysis.words import (COLLECTIVE_ALIAS, COLLECTIVE_WORDS, DEFERRING_CALLS, HOOK_REGISTRATIONS,
                                      NEW_TENSOR_FUNCTIONS, WRAPPED_COLLECTIVE)
from bcast_lint.source import Source

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Reduced:
    lines: tuple[str, ...]  # the lines kept, each with its line ending
    line_numbers: tuple[int, ...]  # the original 1-based number of each line of `text`

    @property
    def text(self) -> str:
        return "".join(self.lines)


def reduce_source(source: Source, tree: ast.Module, helpers: frozenset = frozenset()) -> Reduced:
    """`source` without its irrelevant functions and classes; `tree` is CPython's parse of it.
    `helpers`: more names whose calls keep a function, those of project functions that may run a
    collective (analysis.context)."""
    lines: list[Optional[str]] = source.lines()
    gated = gated_call_words(source.text)
    calling = sorted(_lines_with_calls(lines, COLLECTIVE_WORDS | _aliases(source.text) | gated
                                       | _wrappers(source.text) | _partials(source.text) | helpers)
                     | _lines_reading(lines, gated & MAPPED_PROPERTY_NAMES | _synced_metrics(source.text)
                                      | helpers & _own_properties(tree))
                     | _lines_steering(lines, source.text) | _lines_collating(lines, source.text)
                     | _lines_setting_levels(lines, source.text) | _lines_returning_new_tensors(lines, source.text)
                     | _lines_registering(lines, helpers) | _lines_defining_gathered_hooks(lines, source.text))
    cut = [statement for statement in tree.body
           if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)) and not _mentions(statement, calling)
           and not _ends_the_process(statement) and not _makes_a_directory(statement)
           and not (isinstance(statement, _FUNCTIONS) and _wraps_a_function(statement))]
    cut = _keeping_factories(lines, tree, _keeping_constructions(lines, tree, cut))
    whole = {id(statement) for statement in _constructed_classes(lines, tree, cut)}
    cut_ids = {id(statement) for statement in cut}  # sets: a generated module has thousands of statements
    # A LightningModule's `train_dataloader` decides how often its per-batch hooks run.
    loader_methods, own_sampler = frozenset(PER_BATCH_HOOKS.values()), bool(OWN_SAMPLER.search(source.text))
    # A method whose result a test reads (`if samples.due(step):`) decides which ranks go on.
    steering = frozenset(_STEERING_CALL.findall(source.text))
    for statement in tree.body:
        # A decorator may run what it wraps on some ranks only (`main_only`).
        if (isinstance(statement, _FUNCTIONS) and _wraps_a_function(statement)) or id(statement) in whole:
            continue
        if id(statement) in cut_ids:
            _cut(lines, statement)
        elif isinstance(statement, ast.ClassDef):
            assigning = sorted(_assignments_of(lines, statement, _sent_attributes(lines, statement, calling)))
            members = [member for member in statement.body
                       if isinstance(member, _FUNCTIONS) and _first_line(member) > statement.lineno
                       and member.name not in steering
                       and not _mentions(member, calling) and not SETUP_METHOD.match(member.name)
                       and not _mentions(member, assigning) and not _is_property(member)
                       and not (member.name in loader_methods and own_sampler)
                       and not (member.name in _METRIC_METHODS and _registers_states(statement))]
            for member in _not_called_by_the_rest(lines, statement, members):
                _cut(lines, member)
    kept = [(number, line) for number, line in enumerate(lines, start=1) if line is not None]
    return Reduced(tuple(line for _, line in kept), tuple(number for number, _ in kept))


def _not_called_by_the_rest(lines: list, klass: ast.ClassDef, members: list) -> list:
    """The `members` the class's kept methods never call as `self.<name>(...)`, followed from
    method to method: what a kept method gets from `self._payload()` decides its findings."""
    cut = {member.name: member for member in members}
    kept = [member for member in klass.body if isinstance(member, _FUNCTIONS) and member.name not in cut]
    while kept:
        called = {name for member in kept for number in range(member.lineno, member.end_lineno + 1)
                  for name in _SELF_CALLED.findall(lines[number - 1] or "")}
        kept = [cut.pop(name) for name in called if name in cut]
    return list(cut.values())


_SELF_CALLED = re.compile(r"\bself\.(\w+)\s*\(")
_STEERING_CALL = re.compile(r"^[ \t]*(?:if|elif|while)\b[^\n]*?\.(\w+)\s*\(", re.MULTILINE)


def _keeping_constructions(lines: list, tree: ast.Module, cut: list) -> list:
    """`cut` without the functions that construct a class kept (`Checkpointer(model, optimizer)`
    in a `main` that calls no collective itself): what they pass its `__init__` is what its
    methods' attributes hold (analysis.attributes), and what object they are."""
    cut_ids = {id(statement) for statement in cut}
    kept_classes = {statement.name for statement in tree.body
                    if isinstance(statement, ast.ClassDef) and id(statement) not in cut_ids}
    constructing = sorted(_lines_with_calls(lines, kept_classes)) if kept_classes else []
    return [statement for statement in cut
            if not (isinstance(statement, _FUNCTIONS) and _mentions(statement, constructing))]


def _keeping_factories(lines: list, tree: ast.Module, cut: list) -> list:
    """`cut` without the functions that construct a class of the module and that the kept code
    calls (`loader = build_loader()`, which hands `DataLoader` a sampler of the module's own that
    strides by the rank): what they return is read with the class (analysis.module), which a
    summary of the function alone cannot see. The class is then kept too (_constructed_classes)."""
    classes = {statement.name for statement in tree.body if isinstance(statement, ast.ClassDef)}
    functions = {statement.name: statement for statement in cut if isinstance(statement, _FUNCTIONS)}
    if not classes or not functions:
        return cut
    cut_lines = {number for statement in cut for number in range(statement.lineno, statement.end_lineno + 1)}
    called = {name for number in _lines_with_calls(lines, functions) if number not in cut_lines
              for name in _CALLED.findall(lines[number - 1]) if name in functions}
    constructing = sorted(_lines_with_calls(lines, classes))
    factories = {id(functions[name]) for name in called if _mentions(functions[name], constructing)}
    return [statement for statement in cut if id(statement) not in factories]


def _constructed_classes(lines: list, tree: ast.Module, cut: list) -> list[ast.ClassDef]:
    """The classes among `cut` that the code kept constructs (`state = TrainerState(cfg)`): what
    their methods leave in their attributes (`self.path` named after the rank, a flag set where
    `os.makedirs` lost a race) is what the kept code's calls of them return (analysis.attributes)."""
    classes = {statement.name: statement for statement in cut if isinstance(statement, ast.ClassDef)}
    if not classes:
        return []
    cut_lines = {number for statement in cut for number in range(statement.lineno, statement.end_lineno + 1)}
    called = {name for number in _lines_with_calls(lines, classes) if number not in cut_lines
              for name in _CALLED.findall(lines[number - 1]) if name in classes}
    return [classes[name] for name in called]


def _ends_the_process(statement: ast.stmt) -> bool:
    """A function ending in `raise` or `sys.exit(...)`/`os._exit(...)` with no `return`: its calls
    are exits for the functions that call it (analysis.exits.exiting_functions)."""
    if not isinstance(statement, _FUNCTIONS) or any(isinstance(node, ast.Return) for node in ast.walk(statement)):
        return False
    last = statement.body[-1]
    if isinstance(last, ast.Raise):
        return True
    call = last.value if isinstance(last, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in ("exit", "_exit")


# A torchmetrics Metric's methods that change and read its states (rules/collective_method_on_some_ranks.py,
# _metric_attributes_left_unsynced: an attribute they share without `add_state` is never synced).
_METRIC_METHODS = frozenset({"update", "compute"})


def _registers_states(klass: ast.ClassDef) -> bool:
    """Whether the class registers metric states (`self.add_state(...)`)."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_state"
               for node in ast.walk(klass))


def _makes_a_directory(statement: ast.stmt) -> bool:
    """A function whose own statements make a directory without `exist_ok=True`: called by every
    rank, all but the first raise (rules/collective_on_some_ranks.py, _paths_every_rank_races_for)."""
    return isinstance(statement, _FUNCTIONS) and any(
        isinstance(line, ast.Expr) and isinstance(line.value, ast.Call) and isinstance(line.value.func, ast.Attribute)
        and line.value.func.attr in ("makedirs", "mkdir") and all(k.arg != "exist_ok" for k in line.value.keywords)
        for line in statement.body)


_GATHERED_HOOK = re.compile(r"\bpreprocess_logits_for_metrics\s*=\s*(\w+)")


def _lines_defining_gathered_hooks(lines: list[Optional[str]], text: str) -> set[int]:
    """The `def` lines of the functions handed to a transformers Trainer as
    `preprocess_logits_for_metrics`, whose result the Trainer gathers (BCL015)."""
    names = set(_GATHERED_HOOK.findall(text)) if "preprocess_logits_for_metrics" in text else set()
    if not names:
        return set()
    pattern = re.compile(r"^\s*def\s+(?:" + "|".join(map(re.escape, sorted(names))) + r")\s*\(")
    return {number for number, line in enumerate(lines, start=1) if line and pattern.search(line)}


def _synced_metrics(text: str) -> frozenset:
    """The trainer's metrics dictionaries, where the file may log a metric with sync_dist: a read
    of one may sync it (analysis.logged_metrics)."""
    return METRICS_DICTIONARIES if "sync_dist" in text else frozenset()


def _lines_reading(lines: list[Optional[str]], properties: frozenset) -> set[int]:
    """1-based numbers of the lines that read one of `properties` (`trainer.log_dir`)."""
    if not properties:
        return set()
    pattern = re.compile(r"\.(?:" + "|".join(map(re.escape, sorted(properties))) + r")(?!\w)")
    return {number for number, line in enumerate(lines, start=1) if line and pattern.search(line)}


def _lines_steering(lines: list[Optional[str]], text: str) -> set[int]:
    """1-based numbers of the lines that steer a transformers Trainer (apis.STEERS_TRAINER), and of a
    Lightning `def training_step(`, whose returned loss goes through the Trainer's DDP backward."""
    patterns = [pattern for words, pattern in ((STEERS_TRAINER_WORDS, _STEERS_TRAINER), (("lightning",), _TRAINING_STEP))
                if any(word in text for word in words)]  # (the words first: the patterns cost more)
    return {number for number, line in enumerate(lines, start=1)
            if line and any(pattern.search(line) for pattern in patterns)}


_STEERS_TRAINER = re.compile(STEERS_TRAINER)
_COLLATE_FN = re.compile(r"\b(?:collate_fn|data_collator)[ \t]*=[ \t]*(\w+)")


def _lines_collating(lines: list[Optional[str]], text: str) -> set[int]:
    """In a file that trains with Lightning, the lines handing a loader its `collate_fn=` and the
    `def` of that function: a batch it drops skips the Trainer's step on that process only. In a
    file with an IterableDataset, a Trainer's `data_collator=` too: accelerate joins the batches
    it makes on process 0."""
    if not ("collate_fn" in text and "lightning" in text or "IterableDataset" in text
            and ("collate_fn" in text or "data_collator" in text)):
        return set()
    named = set(_COLLATE_FN.findall(text))
    return {number for number, line in enumerate(lines, start=1) if line and (
        _COLLATE_FN.search(line) or any(re.match(rf"\s*def[ \t]+{name}[ \t]*\(", line) for name in named))}
_TRAINING_STEP = re.compile(TRAINING_STEP)


def _lines_returning_new_tensors(lines: list[Optional[str]], text: str) -> set[int]:
    """In a file that runs a backward, the lines returning a new tensor (`return torch.zeros((),
    requires_grad=True)`): a loss function that does so on some ranks leaves the wrapped model's
    gradient all-reduce waiting on the others."""
    if "backward(" not in text:
        return set()
    return {number for number, line in enumerate(lines, start=1) if line and _RETURNS_NEW_TENSOR.match(line)}


_RETURNS_NEW_TENSOR = re.compile(r"\s*return[ \t]+torch\.(?:" + "|".join(sorted(NEW_TENSOR_FUNCTIONS)) + r")\(")


def _lines_setting_levels(lines: list[str], text: str) -> set[int]:
    """Where a file sets logging levels: a level set by a test on the rank makes what a logger
    prints (and so formats) differ between ranks."""
    if not any(word in text for word in LEVEL_SETTER_WORDS):
        return set()
    return _lines_with_calls(lines, LEVEL_SETTERS)


def _lines_registering(lines: list[str], helpers: frozenset) -> set[int]:
    """Where a hook or a deferred call is registered with a function that may run a collective
    (`stack.callback(confirm, n)`, `p.register_hook(sync)`): the registration runs it later, as
    often as it is made (analysis.hooks)."""
    found = set()
    for number in _lines_with_calls(lines, HOOK_REGISTRATIONS | DEFERRING_CALLS):
        named = set(_WORD.findall(lines[number - 1]))
        if named & helpers or any(f"self.{name}" in helpers for name in named):
            found.add(number)
    return found


_WORD = re.compile(r"\w+")


def _lines_with_calls(lines: list[str], words: Iterable[str]) -> set[int]:
    """1-based numbers of the lines where one of `words` is called: `broadcast(`, `.gather (`."""
    # The words that are identifiers are looked up among the names called on each line: a regular
    # expression of them all costs each line time in proportion to their number, and a generated
    # module's own helper functions (context.helper_words) can number thousands.
    words = set(words)
    plain = {word for word in words if _IDENTIFIER.fullmatch(word)}
    # Not \b: an alias may end a word that starts with a non-ASCII letter.
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(words - plain))) + r")\s*\(") \
        if words - plain else None
    called = _names_called(lines) if plain else None
    return {number for number, line in enumerate(lines, start=1)
            if (called is not None and not plain.isdisjoint(called[number - 1]))
            or (pattern is not None and pattern.search(line))}


_last_called: list = [None, ()]  # the lines last asked about, and the names called on each


def _names_called(lines: list[str]) -> Sequence[list[str]]:
    """The names called on each line (the cut asks up to four times per file)."""
    if _last_called[0] is not lines:
        _last_called[:] = [lines, [_CALLED.findall(line) for line in lines]]
    return _last_called[1]


# A maximal run of word characters followed by `(`: where one of the identifiers is called, it is
# one of these runs.
_IDENTIFIER = re.compile(r"\w+")
_CALLED = re.compile(r"(?<!\w)(\w+)\s*\(")


def _sent_attributes(lines: list, statement: ast.ClassDef, calling: list[int]) -> set[str]:
    """`weights` for `broadcast(self.weights)` on a collective's line inside the class, and the
    attributes the methods holding one test or loop over (`if not self.pending: return` before
    it, `for task in sorted(self.sums, key=...)` around it)."""
    inside = calling[bisect_left(calling, statement.lineno):bisect_right(calling, statement.end_lineno)]
    found = {name for number in inside for name in _SELF_ATTRIBUTE.findall(lines[number - 1] or "")}
    for member in statement.body:
        if isinstance(member, _FUNCTIONS) and _mentions(member, inside):
            found |= {name for number in range(member.lineno, member.end_lineno + 1)
                      if _TEST.match(lines[number - 1] or "") for name in _SELF_ATTRIBUTE.findall(lines[number - 1])}
    return found


def _assignments_of(lines: list, statement: ast.ClassDef, attributes: set[str]) -> set[int]:
    """1-based numbers of the class's lines assigning one of `self`'s `attributes` (`self.x = `,
    `self.x += `)."""
    if not attributes:
        return set()
    pattern = re.compile(r"\bself\.(?:" + "|".join(map(re.escape, sorted(attributes)))
                         + r")(?:\s*(?:[-+*/|&]?=(?!=))|\.(?:" + "|".join(sorted(MUTATORS)) + r")\s*\("
                         + r"|\[[^\]\n]*\]\s*[-+*/|&]?=(?!=))")
    return {number for number in range(statement.lineno, statement.end_lineno + 1)
            if lines[number - 1] and pattern.search(lines[number - 1])}


_SELF_ATTRIBUTE = re.compile(r"\bself\.(\w+)")
_TEST = re.compile(r"\s*(?:if|elif|while|for)\b")  # a loop's iterable decides its collectives' count and order


def _aliases(text: str) -> set[str]:
    """`bc` in `from accelerate.utils import broadcast as bc`. Read from the text, which is much
    faster than walking the tree; a match in a string or comment only keeps more code."""
    return set(COLLECTIVE_ALIAS.findall(text))


_WRAPPER_CLASSES = tuple(name.rsplit(".", 1)[-1] for name in sorted(FORWARD_RUNS_COLLECTIVES))


def _wrappers(text: str) -> set[str]:
    """`ddp` in `ddp = DDP(model)`, `model` in `self.model = DistributedDataParallel(model)` or in
    `fully_shard(model)`: calling the object runs its forward, which may run a collective (apis.FORWARD_RUNS_COLLECTIVES)."""
    sharded = set(_SHARDED_IN_PLACE.findall(text)) if any(word in text for word in SHARDING_WORDS) else set()
    if not any(name in text for name in _WRAPPER_CLASSES):
        return sharded
    constructors = {*_WRAPPER_CLASSES, *(alias for name in _WRAPPER_CLASSES
                                         for alias in re.findall(rf"\b{name}\s+as\s+(\w+)", text))}
    made = re.compile(r"(?<![\w.])(?:self\.)?(\w+)[ \t]*=[ \t]*[\w.]*?\b(?:"
                      + "|".join(map(re.escape, sorted(constructors))) + r")[ \t]*\(")
    return set(made.findall(text)) | sharded


# `model` in `fully_shard(model)`: FSDP2 makes the module itself a sharded one (apis.SHARDS_IN_PLACE).
_SHARDED_IN_PLACE = re.compile(r"\b(?:" + "|".join(sorted(SHARDING_WORDS)) + r")\s*\(\s*(?:self\.)?(\w+)\s*[,)]")


def _partials(text: str) -> set[str]:
    """`reduce` in `reduce = functools.partial(dist.all_reduce, op=SUM)`: calling it runs the
    collective it wraps."""
    return set(_PARTIAL_MADE.findall(text)) if "partial(" in text else set()


_PARTIAL_MADE = re.compile(r"(?<![\w.])(?:self\.)?(\w+)[ \t]*=[ \t]*(?:functools\.)?" + WRAPPED_COLLECTIVE)


def _wraps_a_function(function: ast.stmt) -> bool:
    """Whether a top-level function defines a function inside and calls its first parameter:
    the shape of a decorator."""
    if not function.args.args or not any(isinstance(part, _FUNCTIONS) for part in function.body):
        return False
    wrapped = function.args.args[0].arg
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == wrapped
               for part in function.body if isinstance(part, _FUNCTIONS) for node in ast.walk(part))


def _own_properties(tree: ast.Module) -> frozenset:
    """The names of the properties of the module's top-level classes: reading one runs its body."""
    return frozenset(member.name for statement in tree.body if isinstance(statement, ast.ClassDef)
                     for member in statement.body if isinstance(member, _FUNCTIONS) and _is_property(member))


def _is_property(member: ast.stmt) -> bool:
    """A property may return a rank test the kept methods read (`if self.is_main:`)."""
    return any(isinstance(d, ast.Name) and d.id in ("property", "cached_property")
               for d in member.decorator_list)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _mentions(node: ast.stmt, calling: list[int]) -> bool:
    """Whether a collective is called within the node's lines (`calling`: their numbers, sorted;
    searched, not scanned, so a module's cost does not grow with its statements times its calls)."""
    index = bisect_left(calling, _first_line(node))
    return index < len(calling) and calling[index] <= node.end_lineno


def _cut(lines: list[Optional[str]], node: ast.stmt) -> None:
    """Replace the node's first line with a stub and drop (None) its other lines: the name stays
    bound (a module's own `len` is not the builtin), and a class body stays non-empty. A
    function's decorators stay: what they do to it (`@skip_on_oom` returns None where it
    fails) is what its callers see."""
    first = _first_line(node) - 1
    if isinstance(node, _FUNCTIONS) and node.decorator_list:
        first = node.lineno - 1  # the `def` line; the decorators above it are kept
    line = lines[first]
    indent = re.match(r"[ \t\x0c]*", line).group()  # as the file has it (a form feed counts as none)
    keyword = "class" if isinstance(node, ast.ClassDef) else "def"
    signature = "" if keyword == "class" else "()"
    ending = line[len(line.rstrip("\r\n")):]
    lines[first] = f"{indent}{keyword} {node.name}{signature}: pass{ending}"
    for index in range(first + 1, node.end_lineno):
        lines[index] = None

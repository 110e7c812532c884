"""Which values can differ between the ranks of one job, followed through one scope.

The worlds of ranks.py decide tests on the rank itself (`rank == 0`, `is_main_process`). Real code
also diverges through values that merely come from something that differs between ranks: a
length computed from the rank (`len(items[rank::world])`), a per-rank file check on a path that
only some ranks write, the wall clock, a draw from Python's or NumPy's generator that a script
never seeds, an exception raised by work only some ranks do, a value set in a rank-conditional
branch. This pass follows such values through one scope's statements, in
order, as PARCOACH does for MPI: every value is rank-varying or not known to vary. A value stops
varying where a collective makes it the same on every rank (`all_reduce(flag)`, `broadcast(x)`,
`broadcast_object_list(objs)`, `x = accelerate.utils.broadcast(x)`, `accelerator.gather(x)`).

Only certain sources count: a parameter, an attribute or what an unknown function returns is not
known to vary, and the analysis then says nothing. The result feeds the data flow's worlds
(ranks.World.data): the tests, loops and `try` statements found here can go one way on some ranks
and the other way on the rest, although no rank test decides them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Optional, Sequence

import libcst as cst

from bcast_lint.analysis.apis import (DATA_LOOP_WORDS, LENGTH_FLOORS, LEVEL_QUERIES, MUTATORS, ONE_RANK_DECORATORS,
                                     WRITES_THEN_WAITS)
from bcast_lint.analysis.expressions import (argument_value, attribute_key, cut_to_multiple, even_strides, is_none,
                                             last_name, none_test, positional_arguments, range_span, self_name)
from bcast_lint.analysis.names import root_name
from bcast_lint.analysis.positions import node_code
from bcast_lint.analysis.environment import read_variable
from bcast_lint.analysis.logged_metrics import METRICS_DICTIONARIES
from bcast_lint.analysis.bindings import target_names
from bcast_lint.analysis.ranks import (GROUP_RANK, RankConditions, World, boolean_leaves, dealt_share, make_worlds,
                                       integer_literal, names_world_size, setup_truth)
from bcast_lint.analysis.written_files import DIRECTORY_WRITES, FILE_CHECKS, FILE_WRITES, MOVES, path_key
from bcast_lint.analysis.raising import PASSED_EXCEPTIONS, handles_only
from bcast_lint.analysis.gradients import GRADIENT_ATTRIBUTES, GRADIENT_READERS
from bcast_lint.analysis.walk import Visitor, calls_in, children, ends_in, every_node, names_read, words_in, yields_in

# Sources of values that differ between processes whatever their data.
_CLOCKS = frozenset({"time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns",
                     "time.monotonic", "time.monotonic_ns", "datetime.datetime.now",
                     "datetime.datetime.utcnow", "socket.gethostname", "os.getpid"})
# Calls that read how much memory this process (or its device) uses or has free: each process its own.
_MEMORY_READS = frozenset({"resource.getrusage", "psutil.Process", "psutil.virtual_memory", "tracemalloc.get_traced_memory",
                           "torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated", "torch.cuda.memory_reserved",
                           "torch.cuda.max_memory_reserved", "torch.cuda.mem_get_info", "torch.cuda.memory_stats"})
# Calls that make a file or directory of a name unique to the process that calls them.
PROCESS_UNIQUE = frozenset({"tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.NamedTemporaryFile",
                             "tempfile.TemporaryDirectory"})
# Literals and comprehensions that make a container: its truth is whether it holds items.
_CONTAINERS = (cst.List, cst.ListComp, cst.Set, cst.SetComp, cst.Dict, cst.DictComp)
# Expressions that can name a file (written_files.path_key).
_PATH_FORMS = (cst.BinaryOperation, cst.Call, cst.SimpleString, cst.FormattedString, cst.Attribute, cst.Name)
# Arguments and methods that only say where a value lives: a device that differs between ranks
# does not make the values differ.
_PLACEMENT_KEYWORDS = frozenset({"device", "map_location", "non_blocking", "device_ids", "output_device"})
_PLACEMENT_METHODS = frozenset({"to", "cuda", "device", "set_device", "pin_memory"})
# Collectives after which their first argument holds the same value on every rank.
_SYNCHRONISING = frozenset({"broadcast", "broadcast_object_list", "all_reduce", "all_gather",
                            "all_gather_object", "all_gather_into_tensor"})
# Collectives whose result is the same on every rank (Accelerate returns it).
_UNIFORM_RESULTS = frozenset({"broadcast", "broadcast_object_list", "gather", "gather_for_metrics",
                              "gather_object", "reduce", "pad_across_processes", "all_gather", "all_reduce",
                              "reduce_boolean_decision"})
# Method names that only a collective carries (`fabric.all_reduce`, `strategy.broadcast`,
# `self.all_gather`): on a receiver the analysis cannot type, the result is still taken as the same
# on every rank. Unlike `gather` or `reduce` (`tensor.gather(dim, index)`, `functools.reduce`), no
# common non-collective method is named so; a wrong guess only silences the analysis.
_COLLECTIVE_METHODS = frozenset({"all_reduce", "all_gather", "all_gather_object", "broadcast",
                                 "broadcast_object_list", "gather_for_metrics", "reduce_boolean_decision"})
# Collectives that hand every rank what each one sent.
_GATHERING = frozenset({"all_gather", "all_gather_object", "all_gather_into_tensor"})
# Given the rank, they hand each rank a share of one length (DistributedSampler pads the last).
_BALANCED = frozenset({"DistributedSampler", "DistributedBatchSampler", "ElasticDistributedSampler",
                       "prepare", "prepare_data_loader"})
# Decorators that retry the function with what fits this process's free memory.
_PER_PROCESS_DECORATORS = frozenset({"find_executable_batch_size"})
# The process's random generators, their draws, and tensors' in-place draws.
_GLOBAL_RANDOM_MODULES = frozenset({"torch", "random", "numpy.random"})
_DRAWS = frozenset({"rand", "randn", "randint", "randperm", "bernoulli", "multinomial", "normal", "rand_like",
                    "randn_like", "randint_like", "random", "uniform", "choice", "choices", "shuffle", "sample",
                    "permutation", "gauss", "randrange", "poisson"})
_IN_PLACE_DRAWS = frozenset({"bernoulli_", "uniform_", "normal_", "random_", "exponential_", "geometric_",
                             "cauchy_", "log_normal_"})
# A model (or its configuration) loaded from wherever a rank was told: data-parallel training needs
# the same model on every rank, so what it is (`model.tp_size`) does not differ between them, even
# where each rank reads its own copy (`from_pretrained(init_dir_of(rank))`).
_SHARED_MODELS = frozenset({"from_pretrained", "from_config"})
_PASSING_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "sum", "min", "max", "abs", "round",
                               "range", "list", "tuple", "set", "dict", "sorted", "reversed", "enumerate",
                               "zip", "iter", "next", "any", "all", "divmod", "pow", "map", "filter", "repr"})
_PASSING_MODULES = ("torch.", "math.", "numpy.", "os.path.", "builtins.")
# Calls that list what a directory holds (as many items as there are files).
_LISTINGS = frozenset({"listdir", "glob", "iglob", "scandir", "iterdir"})
# Reads that raise where what they read is missing: a file, the next item of an iterator.
_READS = frozenset({"open", "load", "loads", "read", "read_text", "read_bytes", "listdir", "scandir",
                    "stat", "load_file", "imread", "next", "getsize"})
# Calls that fail when the path is already there (or already gone), unless told not to: when every
# rank makes the same call on one path, one succeeds and the others raise.
_EXCLUSIVE = {"makedirs": "exist_ok", "mkdir": "exist_ok", "remove": None, "unlink": "missing_ok",
              "rmdir": None, "rmtree": "ignore_errors", "symlink": None, "link": None,
              "rename": None, "replace": None,  # (a move: only the first finds its source)
              "copytree": "dirs_exist_ok"}  # (its destination: only the first creates it)
# Of those, pathlib's methods (the path is the receiver).
_PATH_METHODS = frozenset({"mkdir", "unlink", "rmdir"})
_FILE_SYSTEM = frozenset({"os.makedirs", "os.mkdir", "os.remove", "os.unlink", "os.rmdir", "shutil.rmtree",
                          "os.symlink", "os.link", "os.rename", "os.replace", "shutil.copytree"})
# Methods that find where a value stands in a container: given the rank, a position, not data.
# Calls whose result has as many elements as the data selects, and calls that make a boolean mask.
_DATA_SIZED = frozenset({"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere"})
_MASKS = frozenset({"isfinite", "isnan", "isinf", "logical_and", "logical_or", "logical_not", "gt", "lt", "ge",
                    "le", "eq", "ne", "bool"})
_LOOKUPS = frozenset({"index", "get", "count", "find", "rfind", "__getitem__", "pop", "remove"})
_SIZES = frozenset({"numel", "size", "nelement", "__len__"})
# Built-ins that hand back a dict's keys (as a list, a set, in order).
_KEY_COPIES = frozenset({"list", "tuple", "set", "frozenset", "sorted", "iter"})
# Built-ins that fold a comprehension into one value.
_REDUCERS = frozenset({"sum", "max", "min", "any", "all", "mean", "fsum"})
# Calls that hold as many items as their (first) argument: `sorted(x)`, `torch.zeros_like(x)`.
_DEDUPLICATING = frozenset({"set", "frozenset", "unique", "fromkeys", "Counter"})
# Calls that ask what a value is, not what it holds.
_TYPE_TESTS = frozenset({"isinstance", "type", "hasattr", "callable"})
# Attributes of a gradient that hold its values (the others, `dtype`, `device_mesh`, say what it is).
_GRADIENT_VALUES = GRADIENT_ATTRIBUTES | {"data", "T", "mT", "real", "imag"}
# Methods that fold what they are handed into the object's state (a scheduler's, a running meter's).
_STATE_UPDATES = frozenset({"step", "update"})
_SAME_LENGTH = frozenset({"list", "tuple", "sorted", "reversed", "enumerate", "zip",
                          "dict", "iter", "tensor", "as_tensor", "stack", "cat", "zeros_like", "ones_like",
                          "empty_like", "full_like", "rand_like", "randn_like", "Subset", "DataLoader",
                          "TensorDataset", "filter", "map"})
# Calls whose result holds as many items as their first argument, as a table's count is followed.
_KEEPING_COUNT = frozenset({"TensorDataset", "tensor", "as_tensor", "list", "tuple", "stack", "array", "sorted"})
# Accelerate's calls that hand back what they are given, prepared: a loader keeps its batches.
_PREPARING = frozenset({"prepare", "prepare_data_loader"})
UNEVEN_BATCHES = "'{}' is made with even_batches off: each rank's loader keeps its own number of batches"
# Calls that join a list's items end to end (on the first dimension unless told otherwise).
_CONCATENATING = frozenset({"cat", "concatenate", "concat"})
# Calls whose length their arguments give: `torch.zeros(n)`, `torch.arange(n)`.
_SIZED_CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "full", "arange", "rand", "randn", "randint",
                                 "randperm", "linspace"})
# The positional arguments that give the size, where not all do: `full(size, fill_value)`,
# `randint(low, high, size)`, `linspace(start, end, steps)`.
_SIZE_ARGUMENTS = {"full": slice(0, 1), "randint": slice(-1, None), "linspace": slice(2, 3)}
_VIEWS = frozenset({"keys", "values", "items", "copy", "float", "long", "int", "half", "detach", "clone",
                    "contiguous", "cpu", "numpy", "tolist", "flatten"})
_SPLITS = frozenset({"split", "chunk", "tensor_split", "array_split"})
_TORCH_SPLITS = frozenset({"torch.chunk", "torch.tensor_split", "numpy.array_split", "torch.split"})
# Calls that, handed the rank, give each rank its own share of the items (unbalanced).
_SHARES = frozenset({"shard", "islice", "split_dataset_by_node"})
# Progress bars, and what they count (tqdm's).
_PROGRESS_BARS = frozenset({"tqdm", "trange"})
_BAR_COUNTS = ("n", "last_print_n")
_LIBRARIES = frozenset({"torch", "np", "numpy", "math", "collections"})
# `dist.is_initialized()`, `world_size > 1`: setup checks, the same on every rank.
_SETUP_CALLS = frozenset({"is_initialized", "is_available", "get_world_size", "is_torchelastic_launched"})

# `is_main_process or distributed_type == DistributedType.DEEPSPEED`: the guard lets every rank in
# where what it guards runs collectives (diffusers' idiom around `save_state`).
_CONFIGURATION_WORDS = ("distributed_type", "DistributedType", "deepspeed", "fsdp")

RANK = "it is computed from the rank"
CLOCK = "it reads the clock, which differs between ranks"
OWN_TEMPORARY = "it names a temporary file or directory of this process's own (tempfile), which no other rank sees"
CONTROL = "it is set under a condition that differs between ranks"
RAISES = "work in the 'try' block can fail on some ranks only"
FAILING_LOOKUP = "a lookup whose key differs between ranks can fail on some ranks only"
_LOOKUP_ERRORS = frozenset({"KeyError", "IndexError", "LookupError", "Exception", "BaseException"})
SOME_RANKS_WORK = "only some ranks do the work in the 'try' block, and only they can fail"
DATA_WORK = "it works on data that differs between ranks"
SELECTED = "a boolean mask keeps a data-dependent number of elements"
DATA_SIZED = "torch.unique(), nonzero() and bincount() without minlength return a data-dependent number of elements"
CHECKED_THEN_WRITTEN = ("every rank checks a path that the branch then writes, and the first rank to write it "
                        "changes what the others find")
WRITTEN_AFTER = ("every rank checks a path that the function writes after it, before any collective makes the "
                 "ranks wait for each other: a rank that gets to the check after the write finds it")
RACE = "every rank creates, removes or moves the same path, and all but the first to do so raise"
ONE_RANK_CHANGE = "'{}()' changes it on one process only (@{})"
TAKING_TURNS = ("it checks the file system inside '{}', where the ranks take turns: the first finds what "
                "was there before, the others what it left")
# Context managers in which the main process runs the block first and the others after it
# (accelerate's, transformers' TrainingArguments', Fabric's, the `torch_distributed_zero_first` idiom).
_TURNS = frozenset({"main_process_first", "local_main_process_first", "rank_zero_first",
                    "torch_distributed_zero_first"})
HANDLED = "an exception comes from one rank's own data, memory or files"
SET_ORDER = "a set of strings or objects iterates in an order salted per process (PYTHONHASHSEED)"
SORTED_APART = "it is sorted by a key that differs between ranks ({})"
FILE_OF_RANK = "it checks a path named after the rank"
READ_FROM_RANK = "it is read from a file named after the rank: the rank's own data"
UNROUTED_GRAD = ("'{}.forward' runs some submodules only for some batches (line {}), so their parameters have no "
                 "gradient on the ranks whose batch skipped them")
WRITTEN_BY_ONE_RANK = ("it checks a file that only some ranks write (line {}): a rank on another node, or whose file "
                       "system does not show the new file yet, finds something else")
NAMED_AFTER_RANK = "{} returns a name built from the rank"
COUNTED_FROM_RANK = "{} returns as many items as the rank makes it hold"
COMPUTED_FROM_RANK = "{} returns a value computed from the rank"
LOCAL_DATA = "it holds the data of the rank it was given"
OWN_ITEM_LENGTH = "each item the rank was given is as long as its own data"
RANDOM = "it is drawn from a random generator the module seeds with the rank"
SEEDED_OBJECT = "it holds a random generator the module seeds with the rank"
UNSEEDED = "it is drawn from a random generator the script never seeds, which each process seeds on its own"
ENTROPY = "it is drawn from a random generator made without a seed, which each process seeds from its own entropy"
# Generators that, made without a seed, seed themselves from the operating system's entropy
# (`random.Random()`, numpy's `default_rng()`); `torch.Generator()` starts from a fixed seed.
_ENTROPY_SEEDED = frozenset({"random.Random", "random.SystemRandom", "numpy.random.default_rng",
                             "numpy.random.RandomState", "numpy.random.Generator"})
MEMORY = "each process finds it for the memory it has free (find_executable_batch_size)"
MEMORY_USE = "it reads this process's own memory use"
STEPPED_APART = "it is set by '{}()', which each rank calls with a value that differs between ranks"
LOCAL_GRADIENTS = "it reads this rank's own gradients, which nothing has averaged between the ranks yet"
SIGNALLED = "a signal handler sets it, and a signal reaches each process on its own"
LOGGING_LEVEL = "the logging level is set by a test on the rank at line {}"
ENVIRONMENT = "the environment variable {} is set by a test on the rank at {}"
TRAINING_OFF = "line {} puts the model in eval mode on some ranks only, and nothing sets it back before the next step"
UNSYNCED_METRIC = "'{}' is logged without sync_dist=True, so the trainer's metrics hold each rank's own value"
METRIC_STATE = "a torchmetrics metric's state holds this rank's own updates until compute() syncs it"


class RankKind(str):
    """A reason that comes down to a test on the rank, however far it travelled (a helper that
    returns a placeholder off the main process): it decides no failing exit."""


# An iterator's default comes back at a different step on each rank where their lengths differ.
EXHAUSTED = RankKind("it is the default 'next' returns once the iterator runs out, which happens at a different "
                     "step on each rank")
# Arithmetic on the rank, as RANK is: no failing exit (an `assert` on a share's length or items,
# as in a test of the split) counts.
UNEVEN_ENTRY = RankKind("each rank takes its own entry of a table whose entries differ in length")
UNEVEN_ITEMS = RankKind("each rank iterates its own entry of a table whose entries hold items of other lengths")
OWN_SHARE = RankKind("it holds this process's own share of the items")
DUMMY_EXPERIMENT = RankKind("a Lightning logger's experiment is real on global rank 0 only, and @rank_zero_experiment "
                            "hands the other ranks a dummy")
ODD_SHARE = ("each process takes its own share of the {} items of '{}', and an odd number of items "
             "splits unevenly over any even number of processes")
UNEVEN_PIECE = RankKind("each rank takes its own share of the items, and the shares differ in length unless they "
                        "divide evenly")


def is_data_reason(reason: Optional[str]) -> bool:
    """A value that differs between ranks through what each rank holds or meets (its files, its
    own data, the clock, a failed read), not through arithmetic on the rank: only such values
    decide a failing exit (exits.py)."""
    return reason is not None and reason not in (RANK, CONTROL) and not isinstance(reason, RankKind)


def is_handed_placeholder(reason: Optional[str]) -> bool:
    """A value set on some ranks by a rank test elsewhere (a helper's `return {}` off the main
    process, an argument made so): the data flow's worlds cannot tell which ranks hold it."""
    return isinstance(reason, RankKind)


class DealtLength(RankKind):
    """How many items a share dealt round-robin holds (`rows[rank::world]`): the shares differ by
    one item at most, and not at all where they divide evenly. Counted in batches of several
    (`range(0, len(share), 8)`), the ranks' counts then differ only where the shorter share ends
    exactly on a batch's boundary: such a count is taken as alike, leaving that rare case for the
    common correct one (blind28's stoppers, blind29's evaluations)."""


DEALT_PIECE = DealtLength(UNEVEN_PIECE)  # `x.tensor_split(world)[rank]`
FILTERED_SHARE = "each rank keeps the items of its own share that pass a test, as many as its data lets through"
DEALT = DealtLength("each rank takes every world-th item from its rank on, and the shares differ by one item "
                    "unless they divide evenly")


class SequenceLength(str):
    """How long each item is, not how many there are: what a model's `generate()` returns holds
    one sequence per prompt (as many on every rank), each as long as the rank's prompts make it.
    Its shape differs between ranks; a loop over it or its `len()` does not."""


GENERATED = SequenceLength("it is what a model's generate() returns, whose sequences end where each rank's "
                           "prompts make them end")


def generates_uneven_lengths(call: cst.Call) -> bool:
    """`model.generate(ids, max_new_tokens=32)`, a model's own or the project's: sequences that
    end where each rank's prompts make them end (unless held to a minimum length)."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "generate" and not any(
        arg.keyword is not None and arg.keyword.value in LENGTH_FLOORS for arg in call.args)


class OwnResult(str):
    """What a project function computed from a rank's own data (`val = evaluate(model, loader)`):
    its magnitude differs between ranks, its structure (None or not, its keys) does not."""


def is_own_batch(reason: Optional[str]) -> bool:
    """A rank's own batch: its values differ, its structure (`labels is None`) does not."""
    return reason in (DATA, LOCAL_DATA) or isinstance(reason, OwnResult)
DATA = "it is computed from this rank's own batch of data"

# Iterables that hand each rank its own share of the data: a loader (`train_loader`,
# `self.val_dataloader()`, `DataLoader(...)`), a rank's batches. What comes out of them differs
# between ranks in value (a loss, a NaN check, a metric), though not in how many there are when a
# distributed sampler balances them.
_ITERATOR_WRAPPERS = frozenset({"enumerate", "iter", "tqdm", "zip", "islice",
                                # a loader handed back sharded: `for batch in accelerator.prepare(loader)`
                                "prepare", "prepare_data_loader", "setup_dataloaders", "skip_first_batches"})


# The keys of a checkpoint that record where training stood: the ranks save their own checkpoints
# at the same step, so what these hold is alike in every rank's file.
_POSITION_KEYS = frozenset({"step", "global_step", "epoch", "iteration", "steps_done", "global_steps"})


def returned_by(called: str, why: str) -> Optional[str]:
    """Why a call's result varies, given why what the function returns does there: None for the
    rank itself or a test on it (`return state.is_main_process`), which the rank conditions
    follow (a helper's truth) or leave alone."""
    if why == RANK:
        return None
    if why == LOCAL_DATA:  # it hands back the rank's own items (`for name in FILES[rank::world]: yield name`)
        return LOCAL_DATA
    if is_own_batch(why):
        return OwnResult(f"{called} returns what it computed from this rank's own data")
    text = f"{called} returns something else on some ranks"
    if why not in (CONTROL, None) and not isinstance(why, (Passed, PassedLength)):
        text += f", as {why}"  # what makes it differ, named where it starts
    if isinstance(why, (SequenceLength, DealtLength)):
        return type(why)(text)
    if why == LOCAL_GRADIENTS:
        return GradientsResult(text)
    return text if is_data_reason(why) else RankKind(text)


class GradientsResult(str):
    """What a helper computes from the gradients (`grads_finite(model)`): each rank's own, unless
    the caller has averaged them first (_Pass._local_gradients)."""


class Passed(str):
    """A summary's marker: the value varies as the parameter named so does (see
    Divergence.returned_parameters)."""


class PassedLength(str):
    """A summary's marker: how many items the value holds varies as the parameter's does."""


class HandedData(str):
    """A parameter's reason where its callers pass a rank's own data (`autotune(x)` with `x` of
    the rank's shard): work on it can fail on that rank alone, as on the data itself."""


def counted(why: Optional[str]) -> Optional[str]:
    """Why how many items there are differs, leaving out how long each one is (SequenceLength)."""
    return None if isinstance(why, SequenceLength) else why


def passed_as(text: str, why: str) -> str:
    """A parameter's reason, of the kind of the argument's."""
    if why in (DATA, LOCAL_DATA, RANDOM) or isinstance(why, HandedData):
        return HandedData(text)
    if isinstance(why, (SequenceLength, DealtLength, OwnResult)):
        return type(why)(text)  # (an OwnResult: its magnitude differs, what it is does not)
    return text if is_data_reason(why) else RankKind(text)


# A parameter -> why its value, and why how many items it holds, differ between ranks (or None).
Parameters = Mapping[str, tuple]

# A project call, with True for how many items it returns, and why its arguments differ between
# ranks (position or keyword -> (why the value, why the length)) -> why what it returns differs
# between ranks, or None.
Returned = Callable[..., Optional[str]]  # (call, length, arguments, item=None): see ModuleAnalysis.returned_variance


def written_by_some(path: str) -> str:
    return f"only some ranks write '{path}'"


@dataclass
class Divergence:
    """What can differ between ranks in one module's analysed scopes, each with why."""

    tests: dict = field(default_factory=dict)  # operand of an if/while test -> reason
    loops: dict = field(default_factory=dict)  # For/While -> (its iterable or test, reason)
    # For loops over an iterable whose length differs between ranks that stop at a count every
    # rank agreed on (the minimum): the loop runs alike, the iterable is not used up alike.
    capped: dict = field(default_factory=dict)  # For -> (its iterable, why its length differs)
    orders: dict = field(default_factory=dict)  # For over a set -> (its iterable, reason)
    # `range(rank, len(ds), world)`, `ds[rank::world]` of a name made from an even literal table.
    dealt_evenly: set = field(default_factory=set)
    raising: dict = field(default_factory=dict)  # Try -> reason
    failing_withs: dict = field(default_factory=dict)  # With whose body can fail on some ranks -> reason
    # Functions a retrying decorator calls again when they raise, whose work can fail on some
    # ranks only: FunctionDef -> (the decorator, reason). Their collectives run again there alone.
    retried: dict = field(default_factory=dict)
    # Statements that only data differing between ranks lets run: `raise` and `assert` nodes, and
    # the calls of expression statements (`sys.exit(1)`, a helper that exits).
    failing: set = field(default_factory=set)
    # Calls every rank makes alike, with no handler, that only one rank survives (`os.makedirs(d)`
    # without `exist_ok=True` on a path alike everywhere): call -> (its scope, the path).
    races: dict = field(default_factory=dict)
    scopes: set = field(default_factory=set)  # the scopes holding such a test or `try`
    # Those whose tests or `try` statements differ through data each rank holds (is_data_reason),
    # not only through the rank and values alike on every rank of a job (`and not evaluate`).
    data_scopes: set = field(default_factory=set)
    states: dict = field(default_factory=dict)  # collective call -> (its scope's pass, what varies there)
    # Why what the scope returns, or how many items it holds, can differ between ranks (a
    # function's summary reads them; see returned_by).
    returns: Optional[str] = None
    returns_length: Optional[str] = None
    returns_tuple: bool = False
    # Per item of the tuples it returns (`return x, y`), when every return is one of that many
    # items: (why its value differs, why how many items it holds differs), or None where unknown.
    returns_items: Optional[tuple] = None
    # With the parameters seeded as Passed markers: those whose value reaches what the scope
    # returns, and those that decide how many items it holds (`kept.append(s)` under `if s > t`).
    # For a module's own pass: what differs between ranks in its names once its top level has run.
    end: dict = field(default_factory=dict)
    returned_parameters: set = field(default_factory=set)
    returned_length_parameters: set = field(default_factory=set)
    returned_length_of: set = field(default_factory=set)  # the parameters whose length it keeps
    # What the scope leaves in its own object's attributes that differs between ranks, where it
    # returns or ends: "self.path" (or its "#len" key) -> why (analysis.attributes reads it).
    held: dict = field(default_factory=dict)

    def update(self, other: "Divergence") -> None:
        self.tests.update(other.tests)
        self.dealt_evenly |= other.dealt_evenly
        self.loops.update(other.loops)
        self.capped.update(other.capped)
        self.orders.update(other.orders)
        self.raising.update(other.raising)
        self.failing_withs.update(other.failing_withs)
        self.retried.update(other.retried)
        self.failing |= other.failing
        self.races.update(other.races)
        self.scopes |= other.scopes
        self.data_scopes |= other.data_scopes
        self.states.update(other.states)

    def why_at(self, call: cst.Call, expr: cst.BaseExpression) -> Optional[str]:
        """Why `expr`'s value, or how many items it holds, can differ between ranks where `call`
        runs, or None."""
        walk, varying = self.states.get(call, (None, None))
        return (walk.why(expr, varying) or walk.length_why(expr, varying)) if walk is not None else None

    def value_at(self, call: cst.Call, expr: cst.BaseExpression) -> Optional[str]:
        """Why `expr`'s value can differ between ranks where `call` runs, or None."""
        walk, varying = self.states.get(call, (None, None))
        return walk.held(expr, varying) if walk is not None else None

    def length_at(self, call: cst.Call, expr: cst.BaseExpression) -> Optional[str]:
        """Why how many items `expr` holds where `call` runs can differ between ranks, or None."""
        walk, varying = self.states.get(call, (None, None))
        return walk.length_why(expr, varying) if walk is not None else None

    def item_length_at(self, call: cst.Call, expr: cst.BaseExpression) -> Optional[str]:
        """OWN_ITEM_LENGTH where `expr` names one of the rank's own items where `call` runs (`for
        doc in mine`, `[decode(p) for p in mine]`): each is as long as its data."""
        walk = self.states.get(call, (None, None))[0]
        return OWN_ITEM_LENGTH if walk is not None and isinstance(expr, cst.Name) and expr.value in walk.own_items \
            else None


Varying = Mapping[str, str]  # name, "obj.attr", or _length(name) for how many items it holds -> why it varies


class _Pass:
    """One scope's statements in order, with the names whose values vary at each point."""

    def __init__(self, scope: cst.CSTNode, conditions: RankConditions,
                 qualified_names: Callable[[cst.CSTNode], set], collectives: Mapping[cst.Call, object],
                 returned: Optional["Returned"] = None, given: frozenset = frozenset()):
        self._scope = scope
        self._given = given  # parameters every caller passes a value other than None
        self._returned = returned
        self._conditions = conditions
        self._qualified_names = qualified_names
        self._collectives = collectives
        self._control: list[str] = []  # reasons of the varying conditions around the statement
        self._written: dict[str, str] = {}  # path text -> why only some ranks write it
        self._named_files: dict[str, str] = {}  # local -> why: it names a file some ranks write elsewhere
        self._intersections: set[str] = set()  # locals holding an intersection of sets (_agreed_member)
        self._containers: set[str] = set()  # locals holding a list, set or dict made here (_truth_why)
        # Dicts made here whose keys every rank makes alike, whatever their values hold
        # (`{rid: time.perf_counter() for rid in range(6)}`): their keys are no rank's own.
        self._keyed_alike: set[str] = set()
        self._bound: set[str] = set()  # names this scope binds that hold no rank of its own
        self._holding = False  # reading what an attribute is set to (_held_rank)
        self._split_of: dict[str, cst.Call] = {}  # name -> the split whose pieces it holds
        self._literal_lengths: dict[int, Optional[str]] = {}  # lengths of list literals returned -> why there
        self._world_sizes: set[str] = set()  # local names holding the number of processes
        self._own_temporaries: set[str] = set()  # names holding a temporary path of this process's own
        self._rank_zero_writes: set[str] = set()  # path texts a framework's save writes on rank 0 alone
        self._slice_objects: dict[str, cst.Call] = {}  # local names holding `slice(start, stop, step)`
        # (A window, `slice(rank * n, (rank + 1) * n)`, is left out: trl takes its own completions so,
        # and then tests whether what it buffered from them is None, alike on every rank.)
        self._floor_shares: set[str] = set()  # local names holding `len(x) // world`: the least share's size
        self._multiples: dict[str, str] = {}  # local name -> `w` where it holds a count cut to a multiple (`n // w * w`)
        # local name -> `w` where it holds a list cut to whole rounds of `w` (`out[:len(out) - len(out) % w]`)
        self._whole_rounds_of: dict[str, str] = {}
        self._agreed_minimum: set[str] = set()  # names an all_reduce(MIN) made the ranks' least value
        self.own_items: set[str] = set()  # loop targets over the rank's own items (`for doc in mine`)
        self._uneven_item_entries: set[str] = set()  # names holding a rank's entry of an uneven_item_tables table
        self._samplers: set[str] = set()  # names holding a DistributedSampler: its indices are the rank's own
        self._made_on: dict[str, tuple] = {}  # name -> the name its constructor was handed first (`Plateau(opt)`)
        self._locals: Optional[set[str]] = None  # see _scope_locals
        self._made_from: dict[str, frozenset] = {}  # name -> the names its last assignment read
        self._tried: list[bool] = []  # per `try` walked: whether its body branches between ranks
        self._turns: list[str] = []  # the `with accelerator.main_process_first():` blocks around the statement
        self._branches = 0  # the `if` statements around the statement walked
        self._exited_under: Optional[str] = None  # why the `if` just walked left the block on some ranks
        self._exit_control: list[str] = []  # per exit on some ranks before the statement: why (_why_escaping)
        self._masks: set[str] = set()  # names holding a boolean mask (`keep = scores > t`)
        self._sized: set[str] = set()  # names holding a list or tensor of a size set when made (`[0] * n`)
        # Names holding as many items as a module's literal table: `ds = TensorDataset(x, tensor(LABELS))`.
        self._table_sized: dict[str, int] = {}
        self._counters: set[str] = set()  # names holding a Counter or defaultdict
        # Names whose truth sets Accelerate's trigger: `check_trigger()` is then true on every rank
        # wherever one of them is true on any rank, and `check_trigger() or over_budget` agrees.
        self._triggering: set[str] = set()
        self._following: list[Sequence[cst.CSTNode]] = []  # per block walked: the statements after the current one
        # A collective has run since the last backward: gradients averaged by hand are alike now.
        self._gradients_synced = False
        self._sync_off = 0  # the `with model.no_sync():` blocks (or maybe-no_sync ones) around the statement
        self._loops: list[cst.For] = []  # the `for` loops around the statement, the innermost last
        self.found = Divergence()

    # -- statements ------------------------------------------------------------------------
    def block(self, statements: Sequence[cst.CSTNode], varying: Varying) -> Varying:
        depth = len(self._exit_control)
        try:
            for index, statement in enumerate(statements):
                self._following.append(statements[index + 1:])
                self._exited_under = None
                try:
                    varying = self.statement(statement, varying)
                finally:
                    self._following.pop()
                if self._exited_under is not None:
                    # `if pages > self.free: return False`: what follows runs on the other ranks only
                    self._exit_control.append(self._exited_under)
                    self._exited_under = None
        finally:
            del self._exit_control[depth:]
        return varying

    def statement(self, statement: cst.CSTNode, varying: Varying) -> Varying:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in statement.body:
                varying = self._small(small, varying)
            return varying
        for header in _headers(statement):  # `if over_budget or accelerator.check_trigger():`
            for call in calls_in(header):
                if call in self._collectives:
                    self.found.states[call] = (self, varying)
        handler = getattr(self, "_" + type(statement).__name__, None)
        return handler(statement, varying) if handler is not None else varying

    def _small(self, small: cst.CSTNode, varying: Varying) -> Varying:
        calls = calls_in(small)
        collective_calls = [call for call in calls if call in self._collectives]
        # What varies where the collective starts; in a comprehension, with its items bound
        # (`[step(x, y) for x, y in record_batches(rank)]`).
        at_call = self._comprehension_items(small, varying) \
            if collective_calls and any(every_node(small, cst.CompFor)) else varying
        for call in collective_calls:
            self.found.states[call] = (self, at_call)
        self._note_gradients(calls, collective_calls)
        if collective_calls:
            self._comprehension_loops(small, varying)
        if isinstance(small, cst.Assign):
            if isinstance(small.value, cst.Call):  # `counts = self.counts.setdefault(task, zeros)`
                varying = self._mutation(small.value, varying)
            for target in small.targets:
                varying = self._assign(target.target, small.value, varying)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            varying = self._assign(small.target, small.value, varying)
        elif isinstance(small, cst.AugAssign):
            reason = self.why(small.value, varying) or self._why_escaping(small.target)
            key = _key(small.target)
            if isinstance(small.target, cst.Subscript):
                varying = self._augment_item(small.target, small.value, varying)
            elif reason and key:
                varying = {**varying, key: reason}
            if key and isinstance(small.operator, cst.AddAssign) and not isinstance(small.target, cst.Subscript):
                # `ids += drafts[:accepted]`: as many more items as the added part holds
                grown = self.length_why(small.value, varying)
                count = _padding_to(small.value, small.target)
                if count is not None and not self.why(count, varying):
                    # `groups += [None] * (count - len(groups))`: as many as `count` on every rank
                    varying = _bind(varying, [_length(key)], None)
                elif grown:
                    varying = _bind(varying, [_length(key)], grown)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            raced = self._raced_path(small.value, varying) if not (self._tried or self._control) else None
            if raced is not None:
                self.found.races[small.value] = (self._scope, raced)
            varying = self._one_rank_changes(small.value, self._mutation(small.value, varying))
            varying = self._stepped_apart(small.value, varying)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Yield) \
                and isinstance(small.value.value, cst.BaseExpression):
            self._note_item(small.value.value, varying)
            if self._exit_control:  # `if not row: continue`, then `yield row`: as many items as pass
                self._note_length(self._exit_control[-1])
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Yield) \
                and isinstance(small.value.value, cst.From):  # `yield from islice(f, rank, None, world)`
            self._note_length(counted(self.length_why(small.value.value.item, varying)))
        elif isinstance(small, cst.Return):
            self._note_return(small.value, varying)
            self._note_held(varying)
        elif isinstance(small, cst.Assert) and not self._checks_own_expectation(small.test, varying):
            if is_data_reason(self._test_reason(small.test, varying, data_only=True)) or self._data_controlled():
                self.found.failing.add(small)
        if isinstance(small, (cst.Raise, cst.Expr)) and self._data_controlled():
            # `raise`, `sys.exit(1)` or a call of a helper that exits (exits.py)
            self.found.failing.add(small.value if isinstance(small, cst.Expr) else small)
        self._note_writes(calls)
        return self._synchronise(calls, varying)

    def _assign(self, target: cst.CSTNode, value: cst.BaseExpression, varying: Varying) -> Varying:
        # `x, y = read_part(rank)`: each item, too, as the function's summary says
        return self._unpacked(target, value, varying, self._assign_whole(target, value, varying))

    def _assign_whole(self, target: cst.CSTNode, value: cst.BaseExpression, varying: Varying) -> Varying:
        pairs = _pairs(target, value)
        if pairs is not None:  # `rank, world = dist.get_rank(), dist.get_world_size()`
            for one_target, one_value in pairs:
                varying = self._assign(one_target, one_value, varying)
            return varying
        if isinstance(target, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in target.slice):
            return varying  # `padded[:n] = x`: written into, not grown
        if isinstance(target, cst.Subscript):
            # `d[key] = v`: which keys d has varies under a varying condition or with the key;
            # a varying `v` alone leaves its keys and length alike on every rank.
            reason = self._key_reason(target, varying) or self._why_escaping(target)
            key = _key(target.value)
            if reason:
                self._keyed_alike.discard(key)
            if key in self._sized or any(isinstance(e.slice, cst.Index) and self._is_mask(e.slice.value)
                                         for e in target.slice):
                # `counts[i] = n` in a list or tensor made of one size, `x[mask] = 0`: written into, not grown.
                return _bind(varying, [key], reason) if reason else varying
            return _bind(varying, [key, _length(key)], reason) if reason and key else varying
        if self._uniform_result(value) or _last_iteration(value, self._loops):
            reason = length = None
        else:
            reason = self.held(value, varying) or self._why_escaping(target)
            length = self.length_why(value, varying) or self._why_escaping(target)
        keys = _target_keys(target)
        if isinstance(target, cst.Attribute) and not reason:
            # `cfg.output_dir = Path(fabric.broadcast(...))`: what the object's class set no longer counts
            self._bound.update(keys)
        if isinstance(target, cst.Name):
            self._made_from[target.value] = frozenset(names_read(value))
            if _least_of_a_collective(value, self._collectives):
                self._agreed_minimum.add(target.value)  # `steps = int(fabric.all_reduce(n, reduce_op="min"))`
            (self._intersections.add if _intersects(value) else self._intersections.discard)(target.value)
            (self._containers.add if isinstance(value, _CONTAINERS) else self._containers.discard)(target.value)
            (self._keyed_alike.add if self._keys_made_alike(value, varying) else self._keyed_alike.discard)(target.value)
            self._note_named_file(target.value, value)
            (self._sized.add if _made_of_one_size(value) else self._sized.discard)(target.value)
            count = self._table_count(value)
            self._table_sized.update({target.value: count}) if count else self._table_sized.pop(target.value, None)
            (self._counters.add if makes_counter(value) else self._counters.discard)(target.value)
            (self._masks.add if self._is_mask(value) else self._masks.discard)(target.value)
            (self._own_temporaries.add if self._makes_own_temporary(value) else self._own_temporaries.discard)(
                target.value)
            (self._uneven_item_entries.add if self._uneven_items_entry(value, varying)
             else self._uneven_item_entries.discard)(target.value)
            (self._samplers.add if isinstance(value, cst.Call) and last_name(value.func) == "DistributedSampler"
             else self._samplers.discard)(target.value)
            made_on = value.args[0].value if isinstance(value, cst.Call) and value.args else None
            self._made_on[target.value] = (made_on.value,) if isinstance(made_on, cst.Name) else ()
        self._world_sizes.discard(_key(target))
        self._multiples.pop(_key(target), None)
        if isinstance(target, cst.Name) and names_world_size(value):
            self._world_sizes.add(target.value)
        (self._floor_shares.add if isinstance(target, cst.Name) and self._is_floor_share(value)
         else self._floor_shares.discard)(_key(target))
        if isinstance(target, cst.Name) and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                and value.func.value == "slice" and len(value.args) == 3:
            self._slice_objects[target.value] = value  # a stride through the items: dealt round-robin
        else:
            self._slice_objects.pop(_key(target) or "", None)
        if isinstance(target, cst.Name) and self._multiple_of(value):
            self._multiples[target.value] = self._multiple_of(value)
        rounds = self._whole_rounds(value)
        if isinstance(target, cst.Name) and rounds:
            self._whole_rounds_of[target.value] = rounds
        else:
            self._whole_rounds_of.pop(_key(target) or "", None)
        for key in keys:
            if _is_split(value) and isinstance(target, cst.Name):
                self._split_of[key] = value
            else:
                self._split_of.pop(key, None)
        varying = _bind(varying, [_order(key) for key in keys], SET_ORDER if self._set_order(value, varying) else None)
        varying = _bind(varying, [f"{key}.{count}" for key in keys for count in _BAR_COUNTS],
                        self._disabled_bar(value, varying))
        return _bind(_bind(varying, keys, reason), [_length(key) for key in keys], length)

    def _unpacked(self, target: cst.CSTNode, value: cst.BaseExpression, before: Varying, after: Varying) -> Varying:
        """`after` (the assignment's state), where `x, y = read_part(rank)` also binds each name to
        what the project function's summary says of that item of the tuples it returns."""
        if not (isinstance(target, cst.Tuple) and isinstance(value, cst.Call) and self._returned is not None
                and all(isinstance(e.value, cst.Name) for e in target.elements)):
            return after
        arguments = self._argument_reasons(value, before)
        for index, element in enumerate(target.elements):
            name = element.value.value
            why = self._returned(value, False, arguments, item=index)
            length = self._returned(value, True, arguments, item=index)
            if why and not after.get(name):
                after = _bind(after, [name], why)
            if length and not after.get(_length(name)):
                after = _bind(after, [_length(name)], length)
        return after

    def _disabled_bar(self, value: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """`tqdm(..., disable=not accelerator.is_main_process)`: a disabled bar's `update()` counts
        nothing (tqdm 4.70.1, `tqdm.update`: `if self.disable: return` before `self.n += n`), so what
        its `n` says differs between ranks."""
        if not (isinstance(value, cst.Call) and last_name(value.func) in _PROGRESS_BARS):
            return None
        disable = next((arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == "disable"),
                       None)
        why = self.why(disable, varying) if disable is not None else None
        return f"the progress bar is disabled on some ranks ('disable={node_code(disable)}'), and counts nothing there" \
            if why else None

    def _note_gradients(self, calls: Sequence[cst.Call], collective_calls: Sequence[cst.Call]) -> None:
        """A backward leaves each rank its own gradients (DDP's too, under `no_sync()`); a collective
        after it (the user's `all_reduce(p.grad)`, DDP's backward, a helper that runs one) is
        taken to have averaged them."""
        backward = any(last_name(call.func) == "backward" for call in calls)
        if backward and (self._sync_off or not collective_calls):
            self._gradients_synced = False  # (a DDP backward is itself a collective, unless under no_sync)
        elif collective_calls:
            self._gradients_synced = True

    def _local_gradients(self) -> Optional[str]:
        """LOCAL_GRADIENTS where the module averages its gradients by hand, if at all, or
        accumulates them under DDP's `no_sync()`, and no collective has run since the last backward
        of this scope (a helper read alone: as its caller holds them, GradientsResult)."""
        return LOCAL_GRADIENTS if self._conditions.gradients_apart and not self._gradients_synced else None

    def _mutation(self, call: cst.Call, varying: Varying) -> Varying:
        """`items.append(x)` under a varying condition: how many items there are varies; of an `x`
        whose length varies, how long the items are."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in MUTATORS):
            return varying
        key = _key(func.value)
        if key is not None and func.attr.value in ("append", "add") and len(call.args) == 1:
            item_length = counted(self.length_why(call.args[0].value, varying))
            if item_length is not None:
                varying = _bind(varying, [_items_length(key)], item_length)
            item = self.why(call.args[0].value, varying)
            if is_data_reason(item) and not varying.get(key):
                # `losses.append(model(batch).item())`, `seen.add(length)`: what it holds is the rank's own
                varying = _bind(varying, [key], item)
        reason = self._why_escaping(func.value)
        if key is not None and func.attr.value == "extend" and len(call.args) == 1:
            # `buffer.extend(env.episode())`: as many more items as the extension holds
            reason = reason or self.length_why(call.args[0].value, varying)
        if func.attr.value == "setdefault" and call.args:  # a key is added where it varies
            reason = self.why(call.args[0].value, varying) or reason
        if key is None and isinstance(func.value, cst.Subscript):
            key = _key(func.value.value)
            reason = reason or self._key_reason(func.value, varying)
            if func.attr.value == "update":
                # `metrics[src].update(preds, target)`: the entry's own state (a metric's), on the
                # ranks whose data names `src`; the dict's keys stay as they were
                reason = self._key_reason(func.value, varying) or reason
                return _bind(varying, [key], reason) if key and reason else varying
            # `groups[label].append(x)` into a defaultdict: a key is added where `label` varies
        if key and reason:
            self._keyed_alike.discard(key)
        return _bind(varying, [key, _length(key)], reason) if key and reason else varying

    def _keys_made_alike(self, value: cst.BaseExpression, varying: Varying) -> bool:
        """A dict comprehension or literal whose keys, and the items it runs over, do not differ
        between ranks, while some value does (else the dict is alike as a whole)."""
        if isinstance(value, cst.DictComp):
            loop = value.for_in
            return loop.inner_for_in is None and not loop.ifs and self.why(loop.iter, varying) is None \
                and self.length_why(loop.iter, varying) is None and self._why_key(value.key, loop, varying) is None
        return isinstance(value, cst.Dict) and all(
            isinstance(element, cst.DictElement) and self.why(element.key, varying) is None for element in value.elements)

    def _why_key(self, key: cst.BaseExpression, loop: cst.CompFor, varying: Varying) -> Optional[str]:
        """Why a comprehension's key differs between ranks, its loop's names holding the items alike."""
        return self._why_with_local(key, set(target_names(loop.target)), varying)

    def _why_with_local(self, expr: cst.BaseExpression, names: set, varying: Varying) -> Optional[str]:
        """Why `expr` differs between ranks where `names` are bound by it (a lambda's parameters, a
        comprehension's targets): they hold no rank of their own, nor what the scope's names hold."""
        outer = self._bound
        self._bound = outer | names
        try:
            return self.why(expr, {name: why for name, why in varying.items() if name not in names})
        finally:
            self._bound = outer

    def _keys_of_alike(self, expr: cst.BaseExpression) -> bool:
        """`list(arrivals)`, `arrivals.keys()`, `sorted(arrivals)` of a dict keyed alike on every rank."""
        if not isinstance(expr, cst.Call):
            return isinstance(expr, cst.Name) and expr.value in self._keyed_alike
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "keys" and not expr.args:
            return self._keys_of_alike(func.value)
        return isinstance(func, cst.Name) and func.value in _KEY_COPIES and len(expr.args) == 1 \
            and expr.args[0].keyword is None and self._keys_of_alike(expr.args[0].value)

    def _one_rank_changes(self, call: cst.Call, varying: Varying) -> Varying:
        """`on_valid_end(epoch, loss)` of a function this scope defines and decorates to run on one
        process (`@accelerator.on_main_process`, `@rank_zero_only`): the objects of the scope it calls
        methods of (`stopper.update(loss)`) change there only, and what they answer differs."""
        if not (isinstance(call.func, cst.Name) and isinstance(self._scope, cst.FunctionDef)):
            return varying
        helper = next((statement for statement in _statements(self._scope.body) if isinstance(statement, cst.FunctionDef)
                       and statement.name.value == call.func.value), None)
        decorator = next((last_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                          for d in helper.decorators), None) if helper is not None else None
        if decorator not in ONE_RANK_DECORATORS:
            return varying
        own = {param.name.value for param in helper.params.params}
        changed = {inner.func.value.value for inner in calls_in(helper.body) if isinstance(inner.func, cst.Attribute)
                   and isinstance(inner.func.value, cst.Name) and inner.func.value.value not in own
                   and inner.func.value.value in self._scope_locals()}
        return _bind(varying, sorted(changed), RankKind(ONE_RANK_CHANGE.format(call.func.value, decorator)))

    def _stepped_apart(self, call: cst.Call, varying: Varying) -> Varying:
        """`sched.step(val_loss)`, `meter.update(loss.item())` handed the rank's own value: the
        object now holds what differs, and so does the optimizer a stepped object was made on
        (`ReduceLROnPlateau(opt)` sets `opt`'s learning rate)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _STATE_UPDATES and isinstance(func.value, cst.Name)
                and call.args):
            return varying
        handed = next(filter(None, (self.why(arg.value, varying) for arg in call.args if not _is_placement(arg))), None)
        if not is_data_reason(handed) or func.value.value not in self._scope_locals():
            return varying
        updated = func.value.value
        made_on = self._made_on.get(updated, ()) if func.attr.value == "step" else ()
        return _bind(varying, [updated, *made_on], STEPPED_APART.format(node_code(func)))

    def _scope_locals(self) -> set[str]:
        """The names the scope assigns (its own objects, not modules or builtins), read once."""
        if self._locals is None:
            self._locals = {target.target.value for node in every_node(self._scope, cst.Assign)
                            for target in node.targets if isinstance(target.target, cst.Name)}
        return self._locals

    def _augment_item(self, target: cst.Subscript, value: cst.BaseExpression, varying: Varying) -> Varying:
        """`seen[task] += 1` in a Counter or defaultdict gains the key, as `seen[task] = n` would.
        A plain dict raises KeyError on a new key: its keys stay."""
        key = _key(target.value)
        counter = key in self._counters or key in self._conditions.counters
        return self._assign(target, value, varying) if counter else varying

    def _key_reason(self, subscript: cst.Subscript, varying: Varying) -> Optional[str]:
        """Why the key of `d[key]` differs between ranks, or None."""
        return next(filter(None, (self.why(element, varying) for element in subscript.slice)), None)

    def _synchronise(self, calls: list, varying: Varying) -> Varying:
        """After a collective that makes its first argument equal everywhere, it no longer varies."""
        for call in calls:
            site = self._collectives.get(call)
            if site is None or site.api.short_name not in _SYNCHRONISING or getattr(site, "group", None) is not None:
                continue
            first = call.args[0].value if call.args else None
            keys = _payload_keys(first)
            if site.api.short_name in _GATHERING:
                # `t = torch.tensor(1 if failed else 0); all_gather(flags, t)`: each rank shares
                # what `failed` held, and decides from what every rank sent.
                sent = _payload_keys(_gathered(call))
                keys += [name for key in sent for name in self._made_from.get(key, ())]
            varying = _bind(varying, [*keys, *map(_length, keys)], None)
            if _reduces_to_minimum(call):
                self._agreed_minimum.update(keys)
        return varying

    def _note_return(self, value: Optional[cst.BaseExpression], varying: Varying) -> None:
        """What a return hands back differs between ranks when the value does, or when, under a
        condition that differs between ranks, it is a placeholder (`return {}`, `return None`,
        `return torch.zeros(1)`) while the other ranks go on to return something else."""
        if isinstance(value, cst.Tuple) or self.found.returns_tuple:
            # `return x, y`: as a whole, nothing is said; each item is followed where every return
            # hands back as many (`x, y = read_part(rank)`)
            self.found.returns_tuple = True
            self.found.returns = self.found.returns_length = None
            self._note_items(value, varying)
            return
        if isinstance(value, cst.List) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
            # `return [config, vocab, labels]` on the source, `return [None]` on the others
            self._literal_lengths.setdefault(len(value.elements), self._why_controlled())
            reasons = list(filter(None, self._literal_lengths.values()))
            if len(self._literal_lengths) > 1 and reasons:
                self.found.returns_length = self.found.returns_length or reasons[0]
        placeholder = self._why_controlled() if value is None or _is_placeholder(value) else None
        value_why = (self.why(value, varying) if value is not None else None) or placeholder
        length_why = (self.length_why(value, varying) if value is not None else None) or placeholder
        found = self.found
        if isinstance(value_why, Passed):
            found.returned_parameters.add(str(value_why))
        else:
            found.returns = found.returns or value_why
        self._note_length(length_why)

    def _note_items(self, value: Optional[cst.BaseExpression], varying: Varying) -> None:
        found = self.found
        elements = value.elements if isinstance(value, cst.Tuple) else None
        if elements is None or any(isinstance(e, cst.StarredElement) for e in elements) \
                or (found.returns_items is not None and len(found.returns_items) != len(elements)):
            found.returns_items = ()  # returns of other shapes: no item is known
            return
        if found.returns_items == ():
            return
        noted = [(self.why(e.value, varying), self.length_why(e.value, varying)) for e in elements]
        earlier = found.returns_items or [(None, None)] * len(noted)
        found.returns_items = tuple((old[0] or new[0], old[1] or new[1]) for old, new in zip(earlier, noted))

    def _note_item(self, value: cst.BaseExpression, varying: Varying) -> None:
        """A generator's `yield torch.randn(n, 4)`: what its items hold varies as the value does
        (a loop over it binds them so; how many it yields, _For notes)."""
        why = self.why(value, varying)
        if isinstance(why, Passed):
            self.found.returned_parameters.add(str(why))
        elif why is not None and not self.found.returns_tuple:
            self.found.returns = self.found.returns or why

    def _note_held(self, varying: Varying) -> None:
        """Keep what varies in the scope's own attributes (`self.x`) where it leaves."""
        own = self_name(self._scope)
        if own is None:
            return
        for key, why in varying.items():
            attribute = key.removeprefix("#len ").removeprefix("#set ")
            if why and attribute.startswith(own + ".") and attribute.count(".") == 1:
                self.found.held.setdefault(key, why)

    def _note_length(self, length_why: Optional[str]) -> None:
        """Why how many items the scope returns (or yields) can differ between ranks."""
        found = self.found
        if isinstance(length_why, PassedLength):
            found.returned_length_of.add(str(length_why))
        elif isinstance(length_why, Passed):
            found.returned_length_parameters.add(str(length_why))
        else:
            found.returns_length = found.returns_length or length_why

    def _note_writes(self, calls: list) -> None:
        """Paths written under a condition that differs between ranks: only some ranks write them;
        and paths a framework's save writes on global rank 0 alone (apis.WRITES_THEN_WAITS)."""
        for call in calls:
            site = self._collectives.get(call)
            if site is not None and getattr(site.api, "qualified_name", "") in WRITES_THEN_WAITS:
                path = argument_value(call, 0, "filepath") or argument_value(call, 0, "path")
                if path is not None:
                    self._rank_zero_writes.add(node_code(path))
            path = _file_target(call) if self._control else None
            if path is not None:
                text = node_code(path)
                self._written.setdefault(text, written_by_some(text))

    def _own_temporary(self, path: cst.BaseExpression) -> Optional[str]:
        """OWN_TEMPORARY for a path in a temporary directory of this process's own that a framework's
        save wrote on rank 0 alone: the other ranks find nothing there. (Where every rank writes
        its own, each finds what it wrote itself.)"""
        if node_code(path) in self._rank_zero_writes and names_read(path) & self._own_temporaries:
            return OWN_TEMPORARY
        return None

    def _makes_own_temporary(self, value: cst.BaseExpression) -> bool:
        """`tempfile.mkdtemp()`, or a path built on a name holding one (not what a broadcast of it
        agreed on: `stage = trainer.strategy.broadcast(mine)`)."""
        if self._uniform_result(value):
            return False
        return any(self._qualified_names(call) & PROCESS_UNIQUE for call in every_node(value, cst.Call)) \
            or bool(names_read(value) & self._own_temporaries)

    def _note_named_file(self, name: str, value: cst.BaseExpression) -> None:
        """`state_path = ckpt_dir / STATE_FILE`, a file some ranks only write elsewhere in the module."""
        self._named_files.pop(name, None)
        why = self._written_elsewhere(value)
        if why is not None:
            self._named_files[name] = why

    def _written_elsewhere(self, path: cst.BaseExpression) -> Optional[str]:
        """WRITTEN_BY_ONE_RANK where `path` names a file the module writes only under a test on the
        rank (written_files), in this function or another."""
        written = self._conditions.files_written
        if not written or not isinstance(path, _PATH_FORMS):
            return None
        if isinstance(path, cst.Name) and path.value in self._named_files:
            return self._named_files[path.value]
        try:
            key = path_key(ast.parse(node_code(path).strip(), mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            return None
        return WRITTEN_BY_ONE_RANK.format(written[key]) if key in written else None

    def _If(self, statement: cst.If, varying: Varying) -> Varying:
        self._note_checked_then_written(statement)
        if statement.orelse is None and any(last_name(call.func) == "set_trigger" for call in calls_in(statement.body)):
            self._triggering.update(names_read(statement.test))  # `if over_budget: accelerator.set_trigger()`
        # `if rank == 0 and x is None: raise`: argument validation on one rank, no class of its
        # own (exits.py); a raise on data that differs between ranks gets one.
        reason = self._test_reason(statement.test, varying, data_only=_raises(statement))
        if _is_membership(statement.test, self._conditions):
            reason = None  # `if rank in group_ranks:` over every group: each rank joins one
        if reason and yields_in(statement.body) != (statement.orelse is not None and yields_in(statement.orelse)):
            self._note_length(reason)  # `if sum(row) > 3: yield row`: as many items as the test lets through
        if reason == RANK and self._tried and (calls_in(statement.body) or statement.orelse is not None):
            self._tried[-1] = True  # only the ranks a rank test picks do this work of the `try`: they alone can fail
        exits = _arms_exit(statement)
        exited = reason if reason and any(exits) and not all(exits) else None
        self._branches += 1
        try:
            body = self._under(reason, lambda: self.block(_statements(statement.body), varying))
            orelse = varying
            if isinstance(statement.orelse, cst.If):
                orelse = self._under(reason, lambda: self._If(statement.orelse, varying))
            elif statement.orelse is not None:
                orelse = self._under(reason, lambda: self.block(_statements(statement.orelse.body), varying))
        finally:
            self._branches -= 1
        several = self._several_processes_arm(statement.test)
        if several is not None:
            # `if ws > 1: x = all_gather(x)`: the other arm runs in a job of one process, where
            # nothing differs between ranks.
            body, orelse = (body, body) if several else (orelse, orelse)
        if reason == RANK and not any(leaf in self.found.tests for leaf in boolean_leaves(statement.test)):
            # `model = model.to(device) if rank 0 else model.to_empty(...)`: set on every rank,
            # to values of one kind; what varies is which arm, not whether it is set.
            apart = _set_apart(statement)
            body, orelse = _forget_shared(body, orelse, varying, keep=frozenset(apart))
            body = {**body, **{name: why for name, why in apart.items() if name in body}}
        self._exited_under = exited
        return self._pad(statement.test, statement.body, _merge(body, orelse))

    def _note_checked_then_written(self, statement: cst.If) -> None:
        """`if not os.path.exists(cache): torch.save(x, cache)`, run by every rank on one path: the
        first rank to write it changes what the others' checks find, so the test goes one way on
        some ranks and the other way on the rest. (Inside another `if`, a rank test may have chosen
        the one rank that checks and writes.)"""
        if self._branches:
            return
        checked = {node_code(path) for call in calls_in(statement.test) if last_name(call.func) in FILE_CHECKS
                   for path in [_checked_path(call)] if path is not None}
        for call in calls_in(statement.body) if checked else ():
            path = _written_path(call)
            if path is not None and node_code(path) in checked:
                self._written.setdefault(node_code(path), CHECKED_THEN_WRITTEN)
        # `if path.exists(): return ...`, then a write of it before any collective (a cache that
        # rank 0 fills): a rank that gets to the check after the write finds the file.
        for call in self._writes_before_a_collective() if checked else ():
            path = _written_path(call)
            if path is not None and node_code(path) in checked:
                self._written.setdefault(node_code(path), WRITTEN_AFTER)

    def _writes_before_a_collective(self) -> Iterator[cst.Call]:
        """The calls of the statements after the current one in its block, up to the first that
        holds a collective: nothing makes a rank wait for the others before them."""
        for statement in self._following[-1] if self._following else ():
            calls = calls_in(statement)
            if any(call in self._collectives for call in calls):
                return
            yield from calls

    def _several_processes_arm(self, test: cst.BaseExpression) -> Optional[bool]:
        """True when only the body of `if test:` runs in a job of several processes, False when
        only its `else` does, None when either can (see setup_truth)."""
        if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value in self._world_sizes:
            test = test.with_changes(left=cst.Name("world_size"))  # `ws = idist.get_world_size()`
        return setup_truth(test)

    def _truth_why(self, leaf: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """Why a test's operand can be true on some ranks and false on others. A local holding a
        list, set or dict made here is true where it holds items: its length decides, not what
        the items hold (`aligned = [s for s in queue if s.rid in common]`, then `if not aligned:`)."""
        if isinstance(leaf, cst.Name) and leaf.value in self._containers:
            return self.length_why(leaf, varying)
        return self.why(leaf, varying) \
            or (self.length_why(leaf, varying) if isinstance(leaf, (cst.Name, cst.Attribute)) else None)

    def _test_reason(self, test: cst.BaseExpression, varying: Varying, data_only: bool = False) -> Optional[str]:
        """Why a test can go one way on some ranks and the other way on the rest, or None. Its
        operands that the rank alone does not decide are recorded for the data flow's worlds
        (ranks.World.data); a test the worlds decide needs nothing recorded. With `data_only`
        (a test guarding a failing exit), only operands that vary through data are recorded."""
        leaves = boolean_leaves(test)
        worlds = make_worlds(max(self._conditions.compared_literals(test), default=0))
        decided = [leaf for leaf in leaves if setup_truth(leaf) is not None
                   or all(self._conditions.evaluate(leaf, w) is not None for w in worlds)]
        undecided = [leaf for leaf in leaves if leaf not in decided]
        # A container's truth is whether it holds items: `if not self.kept:` varies with its length.
        reasons = {leaf: None if _last_iteration(leaf, self._loops) else self._truth_why(leaf, varying)
                   for leaf in undecided}
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or) and any(
                isinstance(leaf, cst.Call) and last_name(leaf.func) == "check_trigger" for leaf in leaves):
            reasons = {leaf: why for leaf, why in reasons.items() if not names_read(leaf) <= self._triggering}
        # A helper's result from a rank's own data differs in size, not in shape: `val < best`.
        reasons = {leaf: why for leaf, why in reasons.items() if not isinstance(why, OwnResult) or _orders(leaf)}
        # A rank's own batch has the structure every rank's has (one collate function, one
        # dataset): `'labels' in batch`, `batch['mask'] is None` agree between ranks.
        reasons = {leaf: why for leaf, why in reasons.items() if why != DATA or not _tests_structure(leaf)}
        if self._control:
            # Inside a branch that already differs between ranks, a value set there tells no more.
            reasons = {leaf: why for leaf, why in reasons.items() if why != CONTROL}
        recorded = {leaf: why for leaf, why in reasons.items() if why is not None}
        configuration = any(word in text for leaf in undecided for text in words_in(leaf) for word in _CONFIGURATION_WORDS)
        if not configuration and not data_only:
            # `policy.due(step)`, a helper returning `is_main_process and step % every == 0`:
            # false on some ranks whatever the step, unknown on the others.
            recorded.update({leaf: RANK for leaf in undecided if leaf not in recorded and isinstance(leaf, cst.Call)
                             and any(self._conditions.evaluate(leaf, w) is not None for w in worlds)})
        data_reasons = [why for why in recorded.values() if is_data_reason(why)]
        if data_reasons and not configuration:
            # `self.training and torch.rand(()) < p`, `over_time or step >= max_steps`: where the
            # other operands (alike on every rank) let it, the data decides, as a rank test would.
            recorded.update({leaf: data_reasons[0] for leaf in undecided if leaf not in recorded})
        if not recorded and undecided and decided and not configuration and not data_only \
                and self._rank_splits(test, worlds):
            # `rank == 0 or flag`: where the flag is false, only rank 0 goes in.
            recorded = {leaf: RANK for leaf in undecided}
        if data_only and not any(map(is_data_reason, recorded.values())):
            return next(iter(recorded.values()), None)
        if data_reasons and not decided and len(leaves) > 1 and all(map(is_data_reason, recorded.values())):
            # `not torch.isfinite(loss) or loss > limit`: operands of either sense, each of the rank's
            # own data; the worlds take the whole test as one data operand, or a world whose data
            # fails every operand would still take the branch.
            recorded[test] = data_reasons[0]
        if recorded:
            self.found.tests.update(recorded)
            self.found.scopes.add(self._scope)
            if any(map(is_data_reason, recorded.values())):
                self.found.data_scopes.add(self._scope)
            return next(iter(recorded.values()))
        # A rank test every rank answers alike (`int(os.environ.get("LOCAL_RANK", -1)) != -1`:
        # launched at all) does not set ranks apart.
        return RANK if decided and not undecided and any(self.why(leaf, varying) for leaf in decided) \
            and self._rank_splits(test, worlds) else None

    def _checks_own_expectation(self, test: cst.BaseExpression, varying: Varying) -> bool:
        """`assert len(mine) == expected_count(n, rank, world)`: each rank checks what it holds
        against what it computes for itself from its rank, an invariant of the split that holds on
        every rank of a correct program, not an exit that data sends some ranks through."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)):
            return False
        return any(self._computed_from_rank(side) for side in (test.left, test.comparisons[0].comparator))

    def _computed_from_rank(self, expr: cst.BaseExpression) -> bool:
        """`expected_count(n, rank, world)`, `sizes[rank]`, `rank * per_rank`: an expression that
        names the rank itself among its parts."""
        return any(self._names_rank(node) for kind in (cst.Name, cst.Attribute, cst.Call)
                   for node in every_node(expr, kind))

    def _rank_splits(self, test: cst.BaseExpression, worlds) -> bool:
        """Whether the rank tests in `test` give different ranks different outcomes once the
        other tests, the same on every rank, take one value (either) everywhere."""
        return any(len({_evaluate_assuming(self._conditions, test, world, value) for world in worlds}) > 1
                   for value in (True, False))

    def _For(self, loop: cst.For, varying: Varying) -> Varying:
        count = counted(self.length_why(loop.iter, varying))  # how many times the body runs
        if count is None and self.own_items:
            count = self._own_item_count(loop.iter, varying)
        if count is not None and self._stops_at_agreed_minimum(loop):
            self.found.capped[loop] = (loop.iter, count)
            count = None
        if count is not None:
            self.found.loops[loop] = (loop.iter, count)
            if yields_in(loop.body):  # a generator yields as many items as its loop runs
                self._note_length(count)
        elif self._set_order(loop.iter, varying):
            self.found.orders[loop] = (loop.iter, SET_ORDER)
        elif sorted_apart := self._sorted_by_varying_key(loop.iter, varying):
            self.found.orders[loop] = (loop.iter, sorted_apart)
        reason = self.why(loop.iter, varying) if not self._keys_of_alike(loop.iter) else None  # what the items hold
        if reason == RANK and self._own_slice(_enumerated_iterable(loop.iter), varying):
            reason = LOCAL_DATA  # `for prompt in prompts[rank::world]`: the rank's own items, not its number
        counter, items = _enumerated(loop)
        targets = _target_keys(items)
        self._bound.update(key for key in targets if not reason)
        entry = _bind(varying, targets, reason)
        if reason in (LOCAL_DATA, OWN_SHARE) and isinstance(items, cst.Name):
            self.own_items.add(items.value)
        elif isinstance(reason, Passed) and isinstance(items, cst.Name):
            # A summary: how long each item of a parameter is follows what the caller hands it
            # (`for row in rows: if len(row) + n > budget: yield chunk`).
            entry = _bind(entry, [_length(items.value)], reason)
        if isinstance(items, cst.Name) and self._uneven_items_entry(_enumerated_iterable(loop.iter), varying):
            entry = _bind(entry, [_length(items.value)], UNEVEN_ITEMS)  # `for seq in SEQUENCES[rank]`
        if counter is not None:  # the n-th pass counts n on every rank
            entry = _bind(entry, _target_keys(counter), None)
        routed = self._conditions.routed_forward
        parameter = _parameter_target(loop) if routed is not None else None
        if parameter is not None:  # `for p in model.parameters(): if p.grad is None: continue`
            entry = _bind(entry, [f"{parameter}.grad"], UNROUTED_GRAD.format(*routed))
        if reason is None:  # what the iterable says of its items comes first
            entry = _bind(entry, _data_targets(loop.target, loop.iter), DATA)
        self._loops.append(loop)
        try:
            return self._loop(loop, entry, count)
        finally:
            self._loops.pop()

    def _comprehension_loops(self, small: cst.CSTNode, varying: Varying) -> None:
        """A comprehension runs its element once per item, as a `for` runs its body:
        `{lang: m.compute() for lang, m in self.metrics.items()}` over a rank's own keys."""
        inner = varying
        for loop in every_node(small, cst.CompFor):  # outer loops first: an inner iterable reads their items
            count = counted(self.length_why(loop.iter, inner))
            if count is not None:
                self.found.loops[loop] = (loop.iter, count)
            elif self._set_order(loop.iter, inner):
                self.found.orders[loop] = (loop.iter, SET_ORDER)
            elif sorted_apart := self._sorted_by_varying_key(loop.iter, inner):
                self.found.orders[loop] = (loop.iter, sorted_apart)
            inner = self._with_comprehension_items(loop, inner)

    def _own_item_count(self, iterable: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """How many times a loop runs that counts through one of the rank's own items
        (`for begin in range(0, len(doc), stride)`, `for w in windows(doc)` over `for doc in mine`):
        each item is as long as its data. Only the count: the items' tensors stay of one shape."""
        lengths = {_length(name): OWN_ITEM_LENGTH for name in self.own_items if _length(name) not in varying}
        return counted(self.length_why(iterable, {**varying, **lengths}))

    def _stops_at_agreed_minimum(self, loop: cst.For) -> bool:
        """The loop breaks on a test of a count the ranks agreed on as their least
        (`all_reduce(steps, op=MIN)`, then `if step == steps: break`): every rank runs it as often."""
        return any(names_read(test) & self._agreed_minimum for test in _break_tests(loop))

    def _set_order(self, expr: cst.BaseExpression, varying: Varying) -> bool:
        """`expr` is a set (a literal, `set(...)`, a comprehension, or a name bound to one) whose
        items are not plainly integers: it iterates in an order salted per process."""
        key = _key(expr)
        if key is not None:  # `names`, `self.names`
            return _order(key) in varying
        if isinstance(expr, cst.Set):
            return not all(isinstance(element.value, cst.Integer) for element in expr.elements)
        if isinstance(expr, cst.SetComp):
            return not _is_range(expr.for_in.iter)
        return isinstance(expr, cst.Call) and last_name(expr.func) in ("set", "frozenset") and bool(expr.args) \
            and not _is_range(expr.args[0].value)

    def _sorted_by_varying_key(self, expr: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """Why the order of `sorted(items, key=...)` differs between ranks: its key reads what
        differs (`key=lambda t: self.seen[t]`, counts of each rank's own data); or of a Counter's
        `most_common()`, whose counts do. The items alike, each rank visits them in its own order."""
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "most_common":
            counter = expr.func.value
            why = self.why(counter, varying) or self.length_why(counter, varying)
            return SORTED_APART.format(why) if why else None
        key = next((arg.value for arg in expr.args if arg.keyword and arg.keyword.value == "key"), None)
        if last_name(expr.func) != "sorted" or not expr.args or key is None:
            return None
        if isinstance(key, cst.Lambda):
            parameters = [param.name.value for param in key.params.params]
            held = self.why(expr.args[0].value, varying)  # what the items hold, for the key's parameter
            looked_up = key.body.value if isinstance(key.body, cst.Subscript) else None
            why = self.why(key.body, _bind(varying, parameters, held))
        else:
            looked_up = key.value if isinstance(key, cst.Attribute) and key.attr.value == "get" else None
            why = self.why(key, varying)  # `key=counts.get`
        # A table holding as many entries as each rank's own data gave it holds different counts too.
        why = why or (self.length_why(looked_up, varying) if looked_up is not None else None)
        return SORTED_APART.format(why) if why else None

    def _While(self, loop: cst.While, varying: Varying) -> Varying:
        end = varying
        for _ in range(2):  # the second pass sees what the body made vary
            reason = self.why(loop.test, end)
            end = self._loop(loop, _merge(varying, end), reason, passes=1)
        reason = self._test_reason(loop.test, end)
        if any(leaf in self.found.tests for leaf in boolean_leaves(loop.test)):
            self.found.loops[loop] = (loop.test, reason)
        return self._pad(loop.test, loop.body, end)

    def _pad(self, test: cst.BaseExpression, body: cst.BaseSuite, after: Varying) -> Varying:
        """`if len(mine) < chunk: mine = torch.cat([mine, ...])`, `while len(batch) < n:
        batch.append(...)`: code that pads a value to a length the same on every rank; after it,
        how many items the value holds no longer varies."""
        padding = _padding(test)
        if padding is None:
            return after
        key, bound = padding
        if self.why(bound, after) is not None or key not in _names_changed(body):
            return after
        return _bind(after, [_length(key)], None)

    def _loop(self, loop, entry: Varying, reason: Optional[str], passes: int = 2) -> Varying:
        end = entry
        for _ in range(passes):
            end = self._under(reason, lambda start=_merge(entry, end): self.block(_statements(loop.body), start))
        end = _merge(entry, end)
        if loop.orelse is not None:
            end = self.block(_statements(loop.orelse.body), end)
        return end

    def _Try(self, statement, varying: Varying) -> Varying:
        self._tried.append(False)
        try:
            body_end = self.block(_statements(statement.body), varying)
        finally:
            some_ranks_work = self._tried.pop()
        reason = self._raising(statement, _merge(varying, body_end)) or self._handled(statement) \
            or (SOME_RANKS_WORK if some_ranks_work else None)
        # `try: pairs = [read(r) for r in rows] except OSError: continue`, then `yield`: as many
        # items as the caller's data lets through (a summary's marker, no finding here)
        skipped = self._handed_to_failing_work(statement, _merge(varying, body_end)) \
            if any(_skips(handler.body) for handler in statement.handlers) else None
        if reason is not None:
            self.found.raising[statement] = reason
            self.found.scopes.add(self._scope)
            self.found.data_scopes.add(self._scope)
        outcomes = [self._under(reason, lambda h=handler: self.block(_statements(h.body), _merge(varying, body_end)))
                    for handler in statement.handlers]
        if statement.orelse is not None:
            body_end = self.block(_statements(statement.orelse.body), body_end)
        end = _merge(body_end, *outcomes)
        if statement.finalbody is not None:
            end = self.block(_statements(statement.finalbody.body), end)
        self._exited_under = skipped
        return end

    _TryStar = _Try

    def _comprehension_items(self, body: cst.CSTNode, varying: Varying) -> Varying:
        """`varying` with the targets of the comprehensions in `body` bound to what their items hold
        (`[json.loads(line) for line in shard]` parses the lines of a rank's own shard)."""
        for loop in every_node(body, cst.CompFor):
            varying = self._with_comprehension_items(loop, varying)
        return varying

    def _loop_items(self, body: cst.CSTNode, varying: Varying) -> Varying:
        """`varying` with the targets of the `for` loops in `body` bound to what their items hold
        (`for xb, yb in loader: metric.update(model(xb), yb)` works on the rank's own batches)."""
        for loop in every_node(body, cst.For):
            reason = self.why(loop.iter, varying)
            varying = _bind(varying, _target_keys(loop.target), reason) if reason \
                else _bind(varying, _data_targets(loop.target, loop.iter), DATA)
        return varying

    def _with_comprehension_items(self, loop: cst.CompFor, varying: Varying) -> Varying:
        reason = self.why(loop.iter, varying)
        if reason in (LOCAL_DATA, OWN_SHARE) and isinstance(loop.target, cst.Name):
            self.own_items.add(loop.target.value)
        return _bind(varying, _target_keys(loop.target), reason)

    def _raising(self, statement, varying: Varying) -> Optional[str]:
        """Whether the `try` body reads what differs between ranks (a file named after the rank
        or written by some ranks only, the next item of a rank's own iterator), so that it may
        raise on some ranks only; or works on a rank's own data (`compute_loss(model, batch)`),
        which can fail on that rank alone."""
        varying = self._loop_items(statement.body, self._comprehension_items(statement.body, varying))
        handled = _handled_names(statement)
        for call in calls_in(statement.body):
            if self._raced_path(call, varying) is not None:
                return RACE
            if isinstance(call.func, cst.Name) \
                    and handles_only(handled, self._conditions.absorbed.get(call.func.value, frozenset())):
                continue  # `score_batch(rows)` whose helper scores an unparsable row 0 on `ValueError`
            site = self._collectives.get(call)
            fails_on = getattr(getattr(site, "api", None), "fails_on", None)
            if fails_on is not None:  # a project function: its summary knows what can raise in it
                if any(_own_data(self.why(value, varying)) for _, value in handed_arguments(call, fails_on)):
                    return RAISES
                continue
            paths = [arg.value for arg in call.args if not _is_placement(arg)]
            if any(_own_data(self.why(value, varying)) for value in paths) or self._fails_on_what_differs(call, varying):
                return RAISES
            if _errs_if_nonfinite(call) and self._local_gradients():
                return RAISES  # `clip_grad_norm_(..., error_if_nonfinite=True)` on the rank's own gradients
            if site is not None and isinstance(call.func, cst.Attribute) \
                    and _own_data(self.why(call.func.value, varying)):
                return RAISES  # `loss.backward()` through DDP: a NaN (anomaly mode) or OOM on one rank's batch
            if last_name(call.func) not in _READS:
                continue
            if isinstance(call.func, cst.Attribute):
                paths.append(call.func.value)  # `Path(p).read_text()`
            if any(self.why(path, varying) or node_code(path) in self._written for path in paths):
                return RAISES
        return None

    def _fails_on_what_differs(self, call: cst.Call, varying: Varying) -> bool:
        """`write_manifest(out_dir, rank, step)` where the module's helper raises on a parameter
        (a `raise` after a check of a file named after it): handed what differs between ranks,
        the rank itself included, it fails on some ranks only."""
        return any(self.why(value, varying) for value in failing_arguments(self._conditions, call))

    def _handed_to_failing_work(self, statement, varying: Varying) -> Optional[Passed]:
        """In a summary, the parameter (its Passed marker) that the `try` body hands to a function
        of the module that can raise on what it is handed (raising.raising_functions)."""
        varying = self._comprehension_items(statement.body, varying)
        for call in calls_in(statement.body):
            if isinstance(call.func, cst.Name) and call.func.value in self._conditions.raising_functions:
                handed = (self.why(arg.value, varying) for arg in call.args)
                marker = next((why for why in handed if isinstance(why, Passed)), None)
                if marker is not None:
                    return marker
        return None

    def _raced_path(self, call: cst.Call, varying: Varying) -> Optional[cst.BaseExpression]:
        """The path of `os.makedirs(run_dir)` (no `exist_ok=True`), `os.remove(lock)`, `open(p, "x")`
        where every rank names it alike: the ranks race, and only the winner does not raise."""
        path = exclusive_path(call, self._qualified_names)
        alike = path is not None and self.why(path, varying) is None and node_code(path) not in self._written
        return path if alike else None

    def _handled(self, statement) -> Optional[str]:
        """A handler that runs a collective and re-raises, after work that is not a collective
        (`try: self.train() except RuntimeError: self.emergency_checkpoint(); raise`): the
        save-on-crash idiom. The exception comes from one rank's data, memory or files, and only
        that rank enters the handler. (A handler that carries on instead, as a fallback, is
        usually taken by every rank alike: a capability missing everywhere.)"""
        in_handlers = [call for handler in statement.handlers if ends_in(handler.body, cst.Raise) for call in calls_in(handler.body)]
        if not any(self._collectives.get(call) is not None for call in in_handlers):
            return None
        # A project function that runs a collective (`via` its chain) does other work too.
        work = [call for call in calls_in(statement.body)
                if self._collectives.get(call) is None or getattr(self._collectives[call].api, "via", "")]
        return HANDLED if work else None

    def _With(self, statement: cst.With, varying: Varying) -> Varying:
        for item in statement.items:
            if item.asname is None:
                continue
            keys = _target_keys(item.asname.name)
            if _is_own_share(item.item):
                # `with accelerator.split_between_processes(prompts) as mine:` holds this process's
                # own items; their number differs by one at most, and not at all where it divides
                # evenly, which the world size decides: what is kept of them (a filter) is judged.
                varying = _bind(varying, keys, OWN_SHARE)
                varying = _bind(varying, [_length(key) for key in keys], self._odd_share(item.item))
            else:
                varying = _bind(varying, keys, self.why(item.item, varying))
        turns = [node_code(item.item) for item in statement.items
                 if isinstance(item.item, cst.Call) and last_name(item.item.func) in _TURNS]
        self._turns += turns
        unsynced = any(_turns_sync_off(item.item) for item in statement.items)
        self._sync_off += unsynced
        try:
            end = self.block(_statements(statement.body), varying)
        finally:
            del self._turns[len(self._turns) - len(turns):]
            self._sync_off -= unsynced
        failing = self._raising(statement, _merge(varying, end))
        if failing is not None:  # the context manager's exit then sees an exception on those ranks only
            self.found.failing_withs[statement] = DATA_WORK if failing == RAISES else failing
        caught = self._suppressed(statement)
        if caught:  # `with contextlib.suppress(KeyError):` is a `try` whose handler passes
            reason = self._failing_lookup(statement, _merge(varying, end), caught) \
                or (DATA_WORK if failing == RAISES else failing)
            if reason is not None:
                self.found.raising[statement] = reason
                self.found.scopes.add(self._scope)
                self.found.data_scopes.add(self._scope)
        return end

    def _odd_share(self, split: cst.Call) -> Optional[str]:
        """ODD_SHARE for `split_between_processes(IMAGES)` of a module's table of an odd number of
        items, without `apply_padding=True`: the shares differ by one for any even number of processes."""
        items = argument_value(split, 0, "inputs")
        padded = argument_value(split, 1, "apply_padding")
        count = self._conditions.table_lengths.get(items.value) if isinstance(items, cst.Name) else None
        if count is None or count % 2 == 0 or (padded is not None and node_code(padded) != "False"):
            return None
        return RankKind(ODD_SHARE.format(count, node_code(items)))

    def _suppressed(self, statement: cst.With) -> set[str]:
        """The exceptions a `with contextlib.suppress(...)`, or a swallowing context manager of the
        module's own (raising.swallowing_managers), of the statement swallows."""
        caught: set[str] = set()
        for item in statement.items:
            call = item.item
            if isinstance(call, cst.Call) and "contextlib.suppress" in self._qualified_names(call):
                caught |= {last_name(arg.value) or "" for arg in call.args}
            elif isinstance(call, cst.Call) and isinstance(call.func, cst.Name):
                # a context manager of the module's own that swallows (`with tolerate(LinAlgError):`)
                swallowed = self._conditions.swallowing.get(call.func.value, frozenset())
                caught |= swallowed - {PASSED_EXCEPTIONS}
                if PASSED_EXCEPTIONS in swallowed:
                    caught |= {last_name(arg.value) or "" for arg in call.args}
        return caught

    def _failing_lookup(self, statement, varying: Varying, caught: set[str]) -> Optional[str]:
        """A lookup whose key differs between ranks (`LABEL_IDS[name]` for a name of the rank's own
        rows), where the block swallows the KeyError or IndexError it raises on some ranks only."""
        if not caught & _LOOKUP_ERRORS:
            return None
        # A comprehension's variable holds items of what it iterates (`for name in batch`).
        items = {name: comprehension.iter for comprehension in every_node(statement.body, cst.CompFor)
                 for name in target_names(comprehension.target)}
        for subscript in every_node(statement.body, cst.Subscript):
            for element in subscript.slice:
                key = element.slice.value if isinstance(element.slice, cst.Index) else None
                if isinstance(key, cst.Name) and key.value in items:
                    key = items[key.value]
                if key is not None and self.why(key, varying) is not None:
                    return FAILING_LOOKUP
        return None

    def _Match(self, statement: cst.Match, varying: Varying) -> Varying:
        reason = self.why(statement.subject, varying)
        outcomes = [self._under(reason, lambda c=case: self.block(_statements(c.body), varying))
                    for case in statement.cases]
        return _merge(varying, *outcomes)

    def _under(self, reason: Optional[str], walk: Callable[[], Varying]) -> Varying:
        if reason is None:
            return walk()
        self._control.append(reason)
        try:
            return walk()
        finally:
            self._control.pop()

    def _data_controlled(self) -> bool:
        """Under a condition (or in a handler) that differs between ranks through their data."""
        return any(map(is_data_reason, self._control))

    def _why_controlled(self) -> Optional[str]:
        if self._control and (isinstance(self._control[-1], (Passed, PassedLength))
                              or self._control[-1] in (RACE, SOME_RANKS_WORK, LOCAL_GRADIENTS)):
            # set under a test on a parameter (a summary's marker), by the ranks that lost a race, or
            # on a test of the gradients (`return True` on a non-finite one: as the caller holds them)
            return self._control[-1]
        return CONTROL if self._control else None

    def _why_escaping(self, target: cst.BaseExpression) -> Optional[str]:
        """Why what is written into `target` can differ between ranks by where it is written: under
        a condition that differs, or after an exit some ranks took (`if pages > self.free: return`,
        then `self.ongoing[rid] = op`). Past an exit only what outlives the block counts: an object's
        attribute or a container, never a local name, which only the ranks that went on read."""
        if self._exit_control and not isinstance(target, cst.Name):
            return self._why_controlled() or CONTROL
        return self._why_controlled()

    # -- expressions -----------------------------------------------------------------------
    def why(self, expr: cst.CSTNode, varying: Varying) -> Optional[str]:
        """Why `expr`'s value can differ between ranks, or None when it is not known to."""
        if isinstance(expr, (cst.Lambda, cst.SimpleString, cst.Integer, cst.Float)):
            return None
        if isinstance(expr, cst.Name) and expr.value in self._bound:
            return varying.get(expr.value)  # `for global_rank in ranks:` is not this rank
        if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            quantity = self._conditions.quantity(expr)
            if quantity and quantity.startswith(GROUP_RANK):
                return None  # how a group's members are numbered against the others is unknown
            if quantity or self._conditions.property_name(expr):
                return RANK
        if isinstance(expr, cst.Name):
            return varying.get(expr.value) or (SIGNALLED if expr.value in self._conditions.signalled.names else None)
        variable = read_variable(expr)
        where = self._conditions.environment_where(variable) if variable is not None else None
        if where is not None:
            return RankKind(ENVIRONMENT.format(variable, where))
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) \
                and expr.value.value in self._conditions.uniform_tables:
            return None  # `SHARD_ROWS[index]` of `[8, 8, 8]`: 8, whatever the index
        if isinstance(expr, cst.Subscript) and self._own_entry(expr, varying):
            return LOCAL_DATA
        if isinstance(expr, cst.Subscript) and _string_key(expr) in _POSITION_KEYS \
                and self.why(expr.value, varying) == READ_FROM_RANK:
            return None  # `state["global_step"]` of a rank's own checkpoint: every rank saved at the same step
        metric = self._logged_metric(expr)
        if metric is not None:
            return UNSYNCED_METRIC.format(metric)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "shape":  # a batch's shape is its structure; what a rank was handed is its own
                return self.length_why(expr.value, varying) or self._handed_data(expr.value, varying)
            if expr.attr.value in self._conditions.signalled.attributes:
                return SIGNALLED
            if expr.attr.value == "experiment" and self._conditions.lightning_loggers \
                    and last_name(expr.value) in ("logger", "loggers"):
                return DUMMY_EXPERIMENT
            tracked = self._conditions.trackers_on_some_ranks
            if tracked and (expr.attr.value == "trackers" or "wandb.run" in self._qualified_names(expr)):
                return RankKind(tracked)  # `if wandb.run is not None:`, `if accelerator.trackers:`
            if expr.attr.value == "training" and self._conditions.training_off is not None \
                    and isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return RankKind(TRAINING_OFF.format(self._conditions.training_off))
            key = attribute_key(expr) or ""
            if key in self._bound:
                return varying.get(key)
            if varying.get(key):
                return varying[key]
            inner = self.why(expr.value, varying)  # (once: a chain of attributes is walked once per link)
            if inner == LOCAL_GRADIENTS and expr.attr.value not in _GRADIENT_VALUES:
                return None  # `p.grad.device_mesh`, `.dtype`: what the gradient is, alike on every rank
            return inner or self._held_rank(expr) \
                or self._held_data(expr) or self._property_value(expr) or self._instance_value(expr) \
                or self._metric_state(expr) \
                or (self._local_gradients() if expr.attr.value in GRADIENT_ATTRIBUTES else None)  # `p.grad`
        if isinstance(expr, cst.Call):
            return self._call_reason(expr, varying)
        if _gradient_presence(expr):  # `p.grad is not None`: the values held do not decide it
            why = self.why(expr.left, varying)
            return None if why == LOCAL_GRADIENTS else why
        if isinstance(expr, cst.Arg):
            return None if _is_placement(expr) else self.why(expr.value, varying)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension_why(expr, varying)
        if isinstance(expr, cst.IfExp) and (arm := self._taken_arm(expr)) is not None:
            return self.why(arm, varying)
        return next(filter(None, (self.why(child, varying) for child in children(expr))), None)

    def _taken_arm(self, expr: cst.IfExp) -> Optional[cst.BaseExpression]:
        """The arm of `seed if seed is not None else draw()` that runs where every caller passes
        `seed` a value (self._given), or None where the test may go either way."""
        name, none_when = none_test(expr.test)
        if name is None or name not in self._given:
            return None
        return expr.orelse if none_when else expr.body

    def _handed_data(self, expr: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """LOCAL_DATA where `expr` is the data the rank was handed (a hook's batch), else None."""
        return LOCAL_DATA if self.why(expr, varying) == LOCAL_DATA else None

    def _made_uneven(self, func: cst.BaseExpression) -> bool:
        """`accelerator.prepare` where this function binds `accelerator` to an Accelerator made with
        even batches off (analysis.uneven_batches)."""
        return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and isinstance(self._scope, cst.FunctionDef) \
            and (self._scope.name.value, func.value.value) in self._conditions.uneven_accelerators

    def _logged_metric(self, expr: cst.BaseExpression) -> Optional[str]:
        """The key of `trainer.callback_metrics["val_loss"]` (or `.get("val_loss")`) where the
        module logs it without syncing it (analysis.logged_metrics), or None."""
        if isinstance(expr, cst.Subscript):
            dictionary, text = expr.value, _string_key(expr)
        elif isinstance(expr, cst.Call) and last_name(expr.func) == "get" and expr.args \
                and isinstance(expr.func, cst.Attribute):
            key = expr.args[0].value
            dictionary, text = expr.func.value, key.evaluated_value if isinstance(key, cst.SimpleString) else None
        else:
            return None
        if not (isinstance(dictionary, cst.Attribute) and dictionary.attr.value in METRICS_DICTIONARIES):
            return None
        return text if text in self._conditions.unsynced_metrics else None

    def held(self, expr: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """Why what `expr` holds differs between ranks: as `why` says, but the rank's own share of
        a list alike on every rank (`rows[rank::world]`, `pack(rows[rank::world])`) holds its data,
        as a loop over it says, not a number computed from the rank."""
        why = self.why(expr, varying)
        return LOCAL_DATA if why == RANK and self._own_slice(expr, varying) else why

    def _own_slice(self, expr: cst.BaseExpression, varying: Varying) -> bool:
        """`prompts[rank::world]`, `rows[rank * n:(rank + 1) * n]`, `x.chunk(world)[rank]` of a list
        or tensor alike on every rank: the rank's own share of it, whose items are the data it
        holds (not numbers computed from the rank)."""
        if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1) or self.why(expr.value, varying) is not None:
            return False
        index = expr.slice[0].slice
        if isinstance(index, cst.Slice):
            bounds = (index.lower, index.upper)
        elif _is_split(expr.value):
            bounds = (index.value,)  # `x.chunk(world)[rank]`: the rank's own piece of what every rank holds
        elif isinstance(index.value, cst.Name) and index.value.value in self._slice_objects:
            made = self._slice_objects[index.value.value]  # `mine = slice(rank, None, world)`, then `x[mine]`
            bounds = tuple(arg.value for arg in made.args[:2] if arg.keyword is None)
        else:
            return False
        return any(part is not None and self.why(part, varying) == RANK for part in bounds)

    def _own_entry(self, expr: cst.Subscript, varying: Varying) -> bool:
        """`RECORDS[rank]`: the rank's own entry of a module's literal table, the data it holds."""
        table, index = expr.value, expr.slice[0].slice
        return isinstance(table, cst.Name) and table.value in self._conditions.tables and len(expr.slice) == 1 \
            and isinstance(index, cst.Index) and self.why(index.value, varying) == RANK

    def _uneven_items_entry(self, expr: cst.BaseExpression, varying: Varying) -> bool:
        """`SEQUENCES[rank]`, or a name holding it, of a table whose entries' items differ in
        length from entry to entry (RankConditions.uneven_item_tables)."""
        if isinstance(expr, cst.Name):
            return expr.value in self._uneven_item_entries
        return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) \
            and expr.value.value in self._conditions.uneven_item_tables and self._own_entry(expr, varying)

    def _held_rank(self, expr: cst.Attribute) -> Optional[str]:
        """RANK for an attribute the module sets once to a test on the rank or the rank itself
        (`self.is_source = dist.get_rank() == src` in `__init__`)."""
        held = self._conditions.attributes.get(expr.attr.value)
        if held is None or held is expr or self._holding:
            return None
        self._holding = True  # what it holds is read in no scope of its own: no recursion
        try:
            return RANK if self.why(held, {}) == RANK else None
        finally:
            self._holding = False

    def _held_data(self, expr: cst.Attribute) -> Optional[str]:
        """What another object keeps from the rank's own batch (`self.trainer.last_loss`, set in the
        Trainer's `compute_loss`): RankConditions.data_attributes. An attribute of `self` is the
        class's own (analysis.attributes)."""
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return None
        return self._conditions.data_attributes.get(expr.attr.value)

    def _property_value(self, expr: cst.Attribute) -> Optional[str]:
        """`self.state_path`, a property of the method's class: why what it returns differs."""
        value = self._conditions.property_value
        return value(expr, self._scope) if value is not None else None

    def _instance_value(self, expr: cst.Attribute) -> Optional[str]:
        """`norm.frozen` of an object of one of the module's classes: why it differs, as that
        class's methods leave it (analysis.attributes)."""
        value = self._conditions.instance_value
        return value(expr, self._scope) if value is not None else None

    def _metric_state(self, expr: cst.Attribute) -> Optional[str]:
        """`self.hit_rate.hits`, `metric.update_count`: a torchmetrics metric's state read from
        outside the metric, each rank's own until the metric syncs it."""
        state = self._conditions.metric_state
        return state(expr, self._scope) if state is not None else None

    def _comprehension_why(self, expr: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """A comprehension's own targets hold its items, never the rank, whatever their names
        (`[rank for rank, main in everyone if main]` over a gathered list)."""
        targets: list = []
        loop = expr.for_in
        while loop is not None:
            reason = self.why(loop.iter, varying) or self._sampled(loop.iter)
            keys = _target_keys(loop.target)
            varying = _bind(varying, keys, reason)
            targets += keys
            loop = loop.inner_for_in
        added = set(targets) - self._bound
        self._bound |= added
        try:
            return next(filter(None, (self.why(child, varying) for child in children(expr))), None)
        finally:
            self._bound -= added

    def _sampled(self, iterable: cst.BaseExpression) -> Optional[str]:
        """LOCAL_DATA for a DistributedSampler's indices (`[data[i] for i in sampler]`): as many on
        every rank, each rank's own."""
        return LOCAL_DATA if isinstance(iterable, cst.Name) and iterable.value in self._samplers else None

    def _call_reason(self, call: cst.Call, varying: Varying) -> Optional[str]:
        name = last_name(call.func)
        if name in _SETUP_CALLS or self._uniform_result(call):
            return None
        if name == "len" and call.args:
            return counted(self.length_why(call.args[0].value, varying))
        if name in _SIZES and isinstance(call.func, cst.Attribute):  # `shard.numel()`; as `.shape` is, below
            return self.length_why(call.func.value, varying) or self._handed_data(call.func.value, varying)
        if name in _REDUCERS and any(_over_batches(arg.value) for arg in call.args):
            return DATA  # `sum(model(b).item() for b in val_loader)`: a sum of the rank's own batches
        if self._keys_of_alike(call):
            return None  # `list(arrivals)`: the keys, which every rank made alike
        qualified = self._qualified_names(call)
        if qualified & _CLOCKS:
            return CLOCK
        if qualified & _MEMORY_READS:
            return MEMORY_USE
        if name in GRADIENT_READERS and self._local_gradients():
            return LOCAL_GRADIENTS  # `clip_grad_norm_(model.parameters(), 1.0)`: the norm of its own gradients
        if name in _TYPE_TESTS and call.args and self.why(call.args[0].value, varying) == LOCAL_GRADIENTS:
            return None  # `isinstance(p.grad, DTensor)`: what the gradient is, alike, not what it holds
        if self._conditions.seeded_per_rank and _draws_from_the_process(call, qualified):
            return RANDOM
        if _draws_from_the_process(call, qualified, self._conditions.unseeded):
            return UNSEEDED
        if qualified & _ENTROPY_SEEDED and not call.args:
            return ENTROPY
        if self._probes_memory(call):
            return MEMORY
        if name in LEVEL_QUERIES and self._conditions.logging_per_rank:
            return RankKind(LOGGING_LEVEL.format(self._conditions.logging_per_rank))
        if name in FILE_CHECKS:
            path = _checked_path(call)
            if path is not None:
                why = self._written.get(node_code(path)) or self.why(path, varying) or self._own_temporary(path)
                return FILE_OF_RANK if why == RANK else why or self._written_elsewhere(path) \
                    or (TAKING_TURNS.format(self._turns[-1]) if self._turns else None)
        read = self._read_of_own_file(call, varying)
        if read is not None:
            return read
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if name in _PLACEMENT_METHODS:
            return self.why(receiver, varying) if receiver is not None else None
        if name in _BALANCED or name in _SHARED_MODELS:
            return None
        if name == "next" and len(call.args) == 2 and self.length_why(call.args[0].value, varying):
            return EXHAUSTED  # `next(it, None)` over an iterator whose length differs between ranks
        if name == "next" and call.args and _holds_data(call.args[0].value):
            return DATA  # `batch = next(iter(loader))`
        if self._synchronised_answer(call, varying):
            return None
        held = self.why(receiver, varying) if receiver is not None else None
        if held:  # `shard.numel()`, `mine.pop()`; `env.episode()` draws from the object's generator
            return RANDOM if held == SEEDED_OBJECT else held
        given = [(arg.value, self._lambda_why(arg.value, varying) if isinstance(arg.value, cst.Lambda)
                  else self.why(arg.value, varying)) for arg in call.args if not _is_placement(arg)]
        if name == "manual_seed":
            # `torch.Generator().manual_seed(base + rank)`: each rank draws its own random values
            seed = next(filter(None, (why for _, why in given)), None)
            return RANDOM if seed == RANK else seed
        if self._passes_values(call, qualified):
            return next(filter(None, (why for _, why in given)), None)
        seeded = self._seeded_apart(call, varying)
        if seeded:  # `rollout(1000 + rank)` of a helper that seeds its generator with it; handed the
            # rank itself (`load_shard(rank)`), what it makes is the data of the rank it was given
            return LOCAL_DATA if seeded == RANDOM and any(self._names_rank(value) for value, _ in given) else seeded
        returned = self._returned(call, False, self._argument_reasons(call, varying)) \
            if self._returned is not None else None
        if isinstance(returned, GradientsResult):  # a helper reading the gradients: as the caller holds them
            return returned if self._local_gradients() else None
        if returned is not None:  # a project function whose summary says so
            return returned
        # What an unknown function returns is not known to vary, unless it is handed the rank
        # itself: `load_batches(rank)` returns that rank's own data (`ranks.index(rank)` is where
        # the rank stands, arithmetic on it), or a rank's own data: `loss = model(batch)`.
        if name in _LOOKUPS:
            return None
        data = {why for value, why in given
                if why in (DATA, LOCAL_DATA, OWN_SHARE, RANDOM) or (why == RANK and self._names_rank(value))}
        if data == {OWN_SHARE}:
            return OWN_SHARE  # `validate(model, shard)`: what it computes from a process's own share
        if not data:  # `self.bce(logits, ones)` of a parameter the callers hand their own data
            return next((why for _, why in given if isinstance(why, HandedData)), None)
        return DATA if DATA in data else LOCAL_DATA

    def _lambda_why(self, function: cst.Lambda, varying: Varying) -> Optional[str]:
        """Why what a lambda computes from the names around it differs between ranks: `max(range(world),
        key=lambda r: sizes[r])` picks by what `sizes` holds. Its parameters hold no rank of their own."""
        params = function.params
        parameters = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
        return self._why_with_local(function.body, parameters, varying)

    def _seeded_apart(self, call: cst.Call, varying: Varying) -> Optional[str]:
        """RANDOM for a function of the module that seeds a generator with a parameter (generators.py),
        handed there a number made from the rank: what it draws is each rank's own; SEEDED_OBJECT
        for such a class (`PoleEnv(seed=2000 + rank)`), whose object draws so. Else None."""
        seeding = self._conditions.seeded_parameters.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if not seeding:
            return None
        # (a number made from the rank, and nothing else that differs: handed data, the data says)
        apart = any(self.why(value, varying) == RANK for _, value in handed_arguments(call, seeding.parameters)) \
            and all(self.why(arg.value, varying) in (None, RANK) for arg in call.args)
        return (SEEDED_OBJECT if seeding.is_class else RANDOM) if apart else None

    def _read_of_own_file(self, call: cst.Call, varying: Varying) -> Optional[str]:
        """READ_FROM_RANK for what a read of a file named after the rank gives (`torch.load(f"shard_{rank}.pt")`,
        `open(path).read()` of such a path): the rank's own data, of its own length."""
        if last_name(call.func) not in _READS or last_name(call.func) == "next":
            return None
        paths = [arg.value for arg in call.args if arg.keyword is None][:1]
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
            paths.append(call.func.value)  # `open(path).read()`
        for path in paths:
            if isinstance(path, cst.Call):
                why = self._read_of_own_file(path, varying)
            else:
                why = self._written.get(node_code(path)) or self.why(path, varying)
            if why == RANK or why == READ_FROM_RANK:
                return READ_FROM_RANK
        return None

    def _synchronised_answer(self, call: cst.Call, varying: Varying) -> bool:
        """`cache.all_finished(rid)` of a project method that runs a collective on every path and
        whose summary finds nothing in what it returns that differs between ranks: it answers with
        what the collective agreed (`dist.all_reduce(flags, op=MAX); return flags[0].item() == 0`),
        whatever its object holds on each rank."""
        site = self._collectives.get(call)
        return site is not None and bool(getattr(site.api, "via", "")) and self._returned is not None \
            and self._returned(call, False, self._argument_reasons(call, varying)) is None

    def _probes_memory(self, call: cst.Call) -> bool:
        """`probe()` for a function of this scope decorated with Accelerate's
        `@find_executable_batch_size`: it halves the batch size until it fits in this process's
        memory, so each process settles on its own (utils/memory.py, accelerate 1.15.0)."""
        if not isinstance(call.func, cst.Name) or not isinstance(self._scope, cst.FunctionDef):
            return False
        return any(isinstance(statement, cst.FunctionDef) and statement.name.value == call.func.value
                   and any(last_name(_decorator_called(d.decorator)) in _PER_PROCESS_DECORATORS for d in statement.decorators)
                   for statement in _statements(self._scope.body))

    def _names_rank(self, expr: cst.BaseExpression) -> bool:
        """The rank itself (`rank`, `dist.get_rank()`, `args.local_rank`), not a value made from it."""
        quantity = self._conditions.quantity(expr)
        return bool(quantity) and not quantity.startswith(GROUP_RANK)

    @staticmethod
    def _passes_values(call: cst.Call, qualified: set) -> bool:
        """Calls whose result varies with their arguments: builtins (`len`, `range`, `int`),
        torch's, math's and numpy's functions, `os.path`, methods of literals (`"{}".format`)."""
        func = call.func
        if isinstance(func, cst.Name) and func.value in _PASSING_BUILTINS:
            return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, (cst.SimpleString, cst.FormattedString)):
            return True
        return any(name.startswith(_PASSING_MODULES) and not name.startswith("torch.distributed")
                   for name in qualified)

    def length_why(self, expr: cst.BaseExpression, varying: Varying) -> Optional[str]:
        """Why how many items `expr` holds can differ between ranks: a slice bounded by a
        varying value (`items[rank::world]`), a `range` over one, a container filled under a
        condition that differs between ranks, or made from such. The items themselves may
        differ while their number does not (`losses[rank]`, `torch.ones(3) * rank`)."""
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Call) and expr.attr.value in ("values", "indices"):
            return self.length_why(expr.value, varying)  # `x.topk(k).values`, `torch.sort(x).indices`
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return varying.get(_length(_key(expr) or "")) or (
                self._metric_state(expr) if isinstance(expr, cst.Attribute) else None)
        if isinstance(expr, cst.Subscript) and self._dealt_in_rounds(expr):
            whole = self.length_why(expr.value, varying)  # as many rounds as the list holds
            if whole is None:
                self.found.dealt_evenly.add(expr)
            return whole
        if self._conditions.sized_for_the_job(expr) or self._dealt_evenly(expr):
            # `ROWS[rank::world]`, `range(rank, len(ds), world)` of an even literal table, or of one made from it
            return None
        if isinstance(expr, cst.Subscript) and self._cycled_to_a_count(expr, varying):
            return None
        if isinstance(expr, cst.Subscript) and (self._cut_to_least_share(expr, varying)
                                                or self._cut_to_agreed_minimum(expr)):
            return None
        if isinstance(expr, cst.Subscript):
            bounds = [part for element in expr.slice
                      if isinstance(element.slice, cst.Slice) and not self._window(element.slice, varying)
                      and not even_strides(element.slice, self._multiple_of)
                      for part in (element.slice.lower, element.slice.upper, element.slice.step) if part]
            if not _object_state(expr.value) and any(
                    isinstance(element.slice, cst.Index) and self._is_mask(element.slice.value) for element in expr.slice):
                return SELECTED  # `values[mask]`
            index = expr.slice[0].slice if len(expr.slice) == 1 else None
            if isinstance(index, cst.Index) and not isinstance(index.value, (cst.Integer, cst.SimpleString)):
                picked = self.length_why(index.value, varying)
                if picked not in (None, CONTROL):
                    return picked  # `x[idx]` of an index tensor: as many rows as it holds
            if any(not isinstance(element.slice, cst.Slice) for element in expr.slice):
                return self._piece_length(expr, varying)  # `per_rank[rank]`: one item
            bound = next(filter(None, (self.why(part, varying) for part in bounds)), None)
            if bound == RANK and dealt_share(expr) is not None:
                return DEALT
            return bound or self.length_why(expr.value, varying)
        if isinstance(expr, cst.IfExp):  # `list(mine) if rank == 0 else [None] * k`: the arms say
            return self.length_why(expr.body, varying) or self.length_why(expr.orelse, varying)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.MatrixMultiply):
            # `x[:, start:end] @ shard`: as many rows as the left operand; the product contracts the
            # right one's rows (a row-parallel layer's partial sum, of one shape on every rank)
            return self.length_why(expr.left, varying)
        if isinstance(expr, cst.BinaryOperation):
            count = None  # `[None] * len(mine)`: as many items as the count says
            if isinstance(expr.operator, cst.Multiply):
                for items, times in ((expr.left, expr.right), (expr.right, expr.left)):
                    if isinstance(items, (cst.List, cst.Tuple)):
                        count = count or self.why(times, varying)
            return count or self.length_why(expr.left, varying) or self.length_why(expr.right, varying)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            loop = expr.for_in
            if loop.ifs and all(self._agreed_member(condition.test, varying) for condition in loop.ifs):
                return None  # `[s for s in queue if s.rid in common]`: as many as the ranks hold in common
            # a filter of items that differ, or a set of them: as many as there are distinct ones
            filtered = self.why(loop.iter, varying) if loop.ifs or isinstance(expr, (cst.SetComp, cst.DictComp)) \
                else None
            # one item per item iterated: as many as there are sequences, however long each is
            iterated = counted(self.length_why(loop.iter, varying))
            tested = filtered or next(filter(None, (self.why(condition.test, varying) for condition in loop.ifs)), None)
            if isinstance(iterated, DealtLength) and loop.ifs and tested:
                return FILTERED_SHARE  # `[r for r in rows[rank::world] if len(r) <= cap]`: not one item apart
            return iterated or tested
        if isinstance(expr, cst.Call):
            return self._call_length(expr, varying)
        return None

    def _made_alike(self, expr: cst.BaseExpression, varying: Varying) -> bool:
        """A name this scope bound to what every rank holds alike (`all_labels = data.tensors[1]` of
        a dataset made the same everywhere): what it selects is alike too."""
        return isinstance(expr, cst.Name) and expr.value in self._made_from and self.why(expr, varying) is None \
            and not any(self.why(cst.Name(name), varying) for name in self._made_from[expr.value])

    def _table_count(self, expr: cst.BaseExpression) -> Optional[int]:
        """How many items `expr` holds, where a module's literal table says: the table, a name made
        from it, `TensorDataset(x, torch.tensor(LABELS))`, `torch.randn(len(LABELS), 8)`."""
        if isinstance(expr, cst.Name):
            return self._conditions.table_lengths.get(expr.value) or self._table_sized.get(expr.value)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and not expr.args:
            copied = self._conditions.table_copies.get(expr.func.value)  # `recordings()` returning a table
            return self._conditions.table_lengths.get(copied) if copied else None
        if not isinstance(expr, cst.Call) or not expr.args or expr.args[0].keyword is not None:
            return None
        first, name = expr.args[0].value, last_name(expr.func)
        if name in _KEEPING_COUNT:
            return self._table_count(first)
        if name in _SIZED_CONSTRUCTORS and name not in _SIZE_ARGUMENTS:  # (a literal size is no table)
            counted_table = first.args[0].value if isinstance(first, cst.Call) and last_name(first.func) == "len" \
                and first.args else None
            return self._table_count(counted_table) if counted_table is not None else None
        return None

    def _dealt_evenly(self, expr: cst.BaseExpression) -> bool:
        """`items[rank::world]` or `range(rank, len(items), world)` where `items` holds an even number
        of items by its table (as RankConditions.sized_for_the_job, for names made from one)."""
        dealt = dealt_share(expr)
        even = dealt is not None and not dealt[1] and (self._table_count(dealt[0]) or 1) % 2 == 0
        if even:  # (the loop check reads it: exits.rank_dependent_iterable sees no local names)
            self.found.dealt_evenly.add(expr)
        return even

    def _whole_rounds(self, value: cst.BaseExpression) -> Optional[str]:
        """`w` for `items[:len(items) - len(items) % w]` or `items[:n // w * w]`: the list cut to whole
        rounds of `w`."""
        if not (isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice)):
            return None
        index = value.slice[0].slice
        return self._multiple_of(index.upper) if index.lower is None and index.step is None and index.upper else None

    def _dealt_in_rounds(self, expr: cst.Subscript) -> bool:
        """`items[rank::w]` of a list cut to whole rounds of `w`: every rank takes as many items
        where the list is as long on every rank."""
        dealt = dealt_share(expr)
        if dealt is None:
            return False
        items, step = dealt[0], expr.slice[0].slice.step
        rounds = self._whole_rounds_of.get(items.value) if isinstance(items, cst.Name) else self._whole_rounds(items)
        return rounds is not None and rounds == node_code(step)

    def _cycled_to_a_count(self, expr: cst.Subscript, varying: Varying) -> bool:
        """`(mine * n)[:n]`: the rank's own items repeated `n` times and cut to `n`, a count alike
        on every rank (one that holds any item at all)."""
        cut = expr.slice[0].slice if len(expr.slice) == 1 else None
        repeated = expr.value
        if not isinstance(cut, cst.Slice) or cut.upper is None or cut.step is not None \
                or not (cut.lower is None or (isinstance(cut.lower, cst.Integer) and cut.lower.evaluated_value == 0)):
            return False
        if not (isinstance(repeated, cst.BinaryOperation) and isinstance(repeated.operator, cst.Multiply)):
            return False
        count = node_code(cut.upper)
        return count in (node_code(repeated.left), node_code(repeated.right)) and self.why(cut.upper, varying) is None

    def _cut_to_least_share(self, expr: cst.Subscript, varying: Varying) -> bool:
        """`rows[rank::world][:len(rows) // world]`: a dealt share (DealtLength) cut to the size of
        the least share, which every rank's holds."""
        cut = expr.slice[0].slice if len(expr.slice) == 1 else None
        return isinstance(cut, cst.Slice) and cut.upper is not None and cut.step is None \
            and (cut.lower is None or integer_literal(cut.lower) == 0) and self._is_floor_share(cut.upper) \
            and isinstance(self.length_why(expr.value, varying), DealtLength)

    def _cut_to_agreed_minimum(self, expr: cst.Subscript) -> bool:
        """`kept[:int(fewest)]` where `fewest = torch.tensor(len(kept))` was all-reduced with MIN:
        every rank's list holds at least that many, so each keeps exactly as many."""
        cut = expr.slice[0].slice if len(expr.slice) == 1 else None
        if not (isinstance(cut, cst.Slice) and cut.upper is not None and cut.step is None
                and isinstance(expr.value, cst.Name) and (cut.lower is None or integer_literal(cut.lower) == 0)):
            return False
        upper = cut.upper
        if isinstance(upper, cst.Call) and last_name(upper.func) in ("int", "item") and len(upper.args) <= 1:
            upper = upper.args[0].value if upper.args else getattr(upper.func, "value", upper)
        return isinstance(upper, cst.Name) and upper.value in self._agreed_minimum \
            and expr.value.value in self._made_from.get(upper.value, frozenset())

    def _is_floor_share(self, expr: Optional[cst.BaseExpression]) -> bool:
        """`len(rows) // world` (or a name holding it), `world` the number of processes."""
        if isinstance(expr, cst.Name):
            return expr.value in self._floor_shares
        return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.FloorDivide) \
            and isinstance(expr.left, cst.Call) and last_name(expr.left.func) == "len" \
            and (names_world_size(expr.right) or isinstance(expr.right, cst.Name) and expr.right.value in self._world_sizes)

    def _agreed_member(self, test: cst.BaseExpression, varying: Varying) -> bool:
        """`s.rid in common`, where `common` holds what every rank agrees on: the intersection of
        what they gathered (`set.intersection(*map(set, everyone))` after `all_gather_object`), a
        value alike on every rank that each rank's own items all hold."""
        return isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.In) \
            and isinstance(test.comparisons[0].comparator, cst.Name) \
            and test.comparisons[0].comparator.value in self._intersections \
            and self.why(test.comparisons[0].comparator, varying) is None

    def _multiple_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """`w` for `n // w * w`, or a name holding one: a count cut to a multiple of `w` (its code)."""
        return self._multiples.get(expr.value) if isinstance(expr, cst.Name) else cut_to_multiple(expr)

    def _window(self, index: cst.Slice, varying: Varying) -> bool:
        """`x[rank * n:(rank + 1) * n]`: both ends move with the rank alone, a window of one
        width on every rank (where `x` is long enough)."""
        ends = (index.lower, index.upper)
        return all(end is not None and self.why(end, varying) == RANK for end in ends) \
            and (index.step is None or self.why(index.step, varying) is None)

    def _piece_length(self, expr: cst.Subscript, varying: Varying) -> Optional[str]:
        """`torch.split(ids, chunk)[rank]`, `np.array_split(items, world)[rank]`: each rank takes
        its own piece, and the pieces differ in length unless the split divides evenly. An item
        of any other list is of unknown size."""
        pieces = expr.value
        if isinstance(pieces, cst.Name):
            pieces = self._split_of.get(pieces.value, pieces)
        table = isinstance(pieces, cst.Name) and self._conditions.tables.get(pieces.value, False)
        if not (table or _is_split(pieces)) or len(expr.slice) != 1:
            return None
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and self.why(index.value, varying) == RANK:
            if not table and self._split_evenly(pieces):
                return None
            return UNEVEN_ENTRY if table else DEALT_PIECE if _split_in_sections(pieces) else UNEVEN_PIECE
        return None

    def _split_evenly(self, pieces: cst.Call) -> bool:
        """`torch.chunk(table(), world)`, `x.tensor_split(world)`: one piece per process of what
        holds an even number of rows by the module's text (a table, a constructor's literal size):
        taken as written for the job, as a dealt share of an even table is."""
        name = last_name(pieces.func)
        positional = [arg.value for arg in pieces.args if arg.keyword is None]
        method = isinstance(pieces.func, cst.Attribute) and not self._qualified_names(pieces) & _TORCH_SPLITS
        if method:  # `x.chunk(world)`
            split, sections = pieces.func.value, positional[:1]
        else:  # `torch.chunk(x, world)`
            split, sections = (positional[0], positional[1:2]) if positional else (None, [])
        if name not in ("chunk", "tensor_split", "array_split") or not sections or split is None:
            return False
        per_process = names_world_size(sections[0]) or (isinstance(sections[0], cst.Name)
                                                        and sections[0].value in self._world_sizes)
        count = self._rows_count(split)
        return per_process and count is not None and count % 2 == 0

    def _rows_count(self, expr: cst.BaseExpression) -> Optional[int]:
        """How many rows `expr` holds by the module's text: a table, a name made from one, what a
        module function copying one returns, `torch.full((VOCAB, VOCAB), x)` with VOCAB a constant."""
        if isinstance(expr, cst.Call) and last_name(expr.func) in _SIZED_CONSTRUCTORS and expr.args:
            size = expr.args[0].value
            first = size.elements[0].value if isinstance(size, (cst.Tuple, cst.List)) and size.elements else size
            literal = integer_literal(first)
            return literal if literal is not None else self._conditions.constants.get(
                first.value if isinstance(first, cst.Name) else "")
        return self._table_count(expr)

    def _is_mask(self, expr: cst.BaseExpression) -> bool:
        """A boolean tensor a selection is made with: `scores > t`, `~done`, `torch.isfinite(x)`,
        `completion_mask.bool()`, a name holding one or named so (`mask`, `batch.loss_mask`,
        `batch["mask"]`)."""
        named = ((last_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else _string_key(expr)) or "").lower()
        if "mask" in named and "masked" not in named:  # `masked_target`: what a mask was applied to
            return True
        if isinstance(expr, cst.Name):
            return expr.value in self._masks
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return True
        return isinstance(expr, cst.Comparison) or (isinstance(expr, cst.Call) and last_name(expr.func) in _MASKS)

    def _call_length(self, call: cst.Call, varying: Varying) -> Optional[str]:
        name = last_name(call.func)
        if generates_uneven_lengths(call):
            return GENERATED
        selected = call.args[0].value if call.args else call.func.value if isinstance(call.func, cst.Attribute) else None
        if (name in _DATA_SIZED or name == "bincount" and not any(arg.keyword and arg.keyword.value == "minlength"
                                                                  for arg in call.args)) \
                and selected is not None and not _object_state(selected) and not self._made_alike(selected, varying):
            return DATA_SIZED  # `torch.nonzero(flags)`: not of an object's own state, set up alike (a mesh's ids)
        if name in _PREPARING and _prepares_a_loader(call) and self._made_uneven(call.func):
            return UNEVEN_BATCHES.format(node_code(call.func.value))
        if name in _BALANCED or self._uniform_result(call) or (
                name == "DataLoader" and any(last_name(arg.value) in _BALANCED for arg in call.args)):
            return None
        arguments = [arg.value for arg in call.args if arg.keyword is None and not _is_placement(arg)]
        if name == "split" and not isinstance(argument_value(call, 0 if isinstance(call.func, cst.Attribute)
                                                             else 1, "split_size_or_sections"), (cst.List, cst.Tuple)):
            # `x.split(8)`: as many pieces of 8 as the rows of `x` make
            whole = call.func.value if isinstance(call.func, cst.Attribute) and not self._qualified_names(call) \
                else arguments[0] if arguments else None
            why = self.length_why(whole, varying) if whole is not None else None
            return None if isinstance(why, DealtLength) else why  # batches of a dealt share (DealtLength)
        if name == "topk":  # `x.topk(k)`, `torch.topk(x, k)`: as many as `k` says
            count = argument_value(call, 0 if isinstance(call.func, cst.Attribute) and not self._qualified_names(call)
                                   else 1, "k")
            return self.why(count, varying) if count is not None else None
        if name == "range" or name in _SIZED_CONSTRUCTORS:
            sizes = arguments[_SIZE_ARGUMENTS.get(name, slice(None))]  # not `full`'s fill value
            span = range_span(call) if name == "range" else None
            if span is not None:
                sizes = span  # `range(rank * 4, rank * 4 + 4)`: four on every rank
            why = next(filter(None, (self.why(arg, varying) for arg in sizes)), None)
            batched = name == "range" and len(arguments) == 3 and integer_literal(arguments[2]) != 1
            return None if batched and isinstance(why, DealtLength) else why  # (DealtLength)
        if name in _SHARES and any(self._names_rank(arg.value) for arg in call.args) \
                and (isinstance(call.func, cst.Attribute) or self._qualified_names(call)):  # not a function of one's own
            return UNEVEN_PIECE  # `ds.shard(num_shards=world, index=rank)`, `islice(rows, rank, None, world)`
        if isinstance(call.func, cst.Attribute) and (name in _VIEWS or name in _PLACEMENT_METHODS):
            return self.length_why(call.func.value, varying)  # `counts.items()`, `x.to(device)`
        if name == "next" and arguments:  # a batch of a loader over a rank's own, uneven share
            return self.length_why(arguments[0], varying)
        if name in _LISTINGS and arguments:  # `os.listdir(node_dir)`: what is in a directory of its own
            why = self._written.get(node_code(arguments[0])) or self.why(arguments[0], varying)
            return FILE_OF_RANK if why == RANK else why
        read = self._read_of_own_file(call, varying)
        if read is not None:  # `torch.load(f"shard_{rank}.pt")`: as many items as the rank's file holds
            return read
        if name in _DEDUPLICATING and arguments:  # `set(labels)`: as many as there are distinct values
            return self.why(arguments[0], varying) or self.length_why(arguments[0], varying)
        sampler = argument_value(call, None, "sampler") or argument_value(call, None, "batch_sampler")
        if name == "DataLoader" and sampler is not None:  # as many batches as its sampler hands it
            return self.length_why(sampler, varying)
        if name in _CONCATENATING and arguments and _key(arguments[0]) is not None \
                and argument_value(call, 1, "dim") is None and argument_value(call, 1, "axis") is None:
            items = varying.get(_items_length(_key(arguments[0])))  # `torch.cat(kept)` of selections
            if items is not None:
                return items
        if name in _SAME_LENGTH and arguments:
            return next(filter(None, (self.length_why(arg, varying) for arg in arguments)), None)
        if isinstance(call.func, cst.Attribute) and self.why(call.func.value, varying) == SEEDED_OBJECT:
            return RANDOM  # `env.episode()`: as many steps as the rank's own generator lets the episode last
        if self._returned is None or any(names_read(arg.value) & self._agreed_minimum for arg in call.args):
            return None  # (a helper handed the count every rank agreed on stops there)
        return self._returned(call, True, self._argument_reasons(call, varying))

    def _argument_reasons(self, call: cst.Call, varying: Varying) -> dict:
        """Position (or keyword) -> why the argument's value, and why how many items it holds,
        differ between ranks (either None), for the arguments where one does."""
        reasons: dict = {}
        for index, arg in enumerate(call.args):
            if arg.star:
                break  # the positions from here on are unknown
            if _is_placement(arg):
                continue
            whys = (self.held(arg.value, varying), self.length_why(arg.value, varying))
            if any(whys):
                reasons[arg.keyword.value if arg.keyword is not None else index] = whys
        return reasons

    def _uniform_result(self, value: cst.BaseExpression) -> bool:
        return uniform_result(value, self._collectives)


def uniform_result(value: cst.BaseExpression, collectives: Mapping[cst.Call, object]) -> bool:
    """`x = accelerate.utils.broadcast(x)`, `total = accelerator.reduce(t)`: equal everywhere."""
    site = collectives.get(value) if isinstance(value, cst.Call) else None
    if site is None:  # a receiver the analysis cannot type: `fabric.all_reduce(t)` in a helper
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in _COLLECTIVE_METHODS
    return site.api.short_name in _UNIFORM_RESULTS and getattr(site, "group", None) is None


def agreed_value(value: cst.BaseExpression, collectives: Mapping[cst.Call, object]) -> bool:
    """A collective's result, or a read of one: `fabric.all_reduce(loss, reduce_op="mean").item()`."""
    return uniform_result(_read_of(value), collectives)


def _read_of(value: cst.BaseExpression) -> cst.BaseExpression:
    """What `x.item()`, `x.cpu().tolist()` read: `x`."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args \
            and value.func.attr.value in _SCALAR_READS:
        value = value.func.value
    return value


_SCALAR_READS = frozenset({"item", "tolist", "cpu", "detach", "float", "numpy"})
# What a function whose every return is agreed_value returns (ModuleAnalysis.returned_variance):
# known not to differ between ranks, whatever it was handed (falsy: no reason it differs).
AGREED = ""


def divergence_of(scope: cst.CSTNode, conditions: RankConditions,
                  qualified_names: Callable[[cst.CSTNode], set], collectives: Mapping[cst.Call, object],
                  returned: Optional[Returned] = None, parameters: Optional[Parameters] = None,
                  attributes: Optional[Varying] = None, given: frozenset = frozenset()) -> Divergence:
    """The tests, loops and `try` statements of `scope` whose outcome can differ between ranks.
    `returned(call, length, arguments)`: why what a project function returns (or how many items
    it holds) differs between ranks, from its summary, or None (see Returned); `parameters`: those
    of `scope` that differ between ranks (analysis.callers), or the summaries' Passed markers;
    `attributes`: what the method's own object holds that differs between ranks when it starts
    (analysis.attributes), keyed as the state keys them ("self.path", "#len self.items"); `given`:
    the parameters every caller passes a value other than None."""
    walk = _Pass(scope, conditions, qualified_names, collectives, returned, given)
    statements = scope.body if isinstance(scope, cst.Module) else _statements(scope.body)
    entry: dict = dict(attributes or {})
    for name, (value, length) in (parameters or {}).items():
        entry = _bind(_bind(entry, [name], value), [_length(name)], length)
    end = walk.block(statements, entry)
    walk._note_held(end)
    if isinstance(scope, cst.Module):
        walk.found.end = dict(end)
    retrying = _retrying_decorator(scope)
    if retrying is not None and not _agrees_to_fail(scope, collectives):
        reason = walk._raising(scope, _merge(entry, end))
        if reason is not None:
            walk.found.retried[scope] = (retrying, DATA_WORK if reason == RAISES else reason)
    # found.states holds the pass (its why() answers the rules later): the pass must not hold
    # found in turn, or the cycle keeps the scope's tree alive until a full collection.
    found, walk.found = walk.found, Divergence()
    return found


# Decorators that call the function again when it raises: a `retry` of one's own, tenacity's
# `retry`, retrying's `retry`, backoff's `on_exception`.
_RETRYING = frozenset({"retry", "retry_on_failure", "retry_on_exception", "on_exception", "retriable"})


def _agrees_to_fail(function: cst.FunctionDef, collectives: Mapping[cst.Call, object]) -> bool:
    """Whether the function raises on a test of what a collective returned (`landed =
    accelerator.reduce(found)`, then `if landed < world: raise ...`): the ranks agree to fail, and
    the decorator retries them together."""
    agreed = {name for assign in every_node(function.body, cst.Assign)
              if isinstance(assign.value, cst.Call) and assign.value in collectives
              for target in assign.targets for name in target_names(target.target)}
    agreed |= {call.args[0].value.value for call in calls_in(function.body)  # `dist.all_reduce(flag, ...)`
               if call in collectives and call.args and isinstance(call.args[0].value, cst.Name)}
    return any(ends_in(test.body, cst.Raise) and set(names_read(test.test)) & agreed
               for test in every_node(function.body, cst.If))


def _retrying_decorator(scope: cst.CSTNode) -> Optional[cst.Decorator]:
    if not isinstance(scope, cst.FunctionDef):
        return None
    return next((decorator for decorator in scope.decorators
                 if last_name(_decorator_called(decorator.decorator)) in _RETRYING), None)


# -- helpers ----------------------------------------------------------------------------------

def _gathered(call: cst.Call) -> Optional[cst.BaseExpression]:
    """What a rank sends to an all-gather: `t` of torch's `all_gather(out, t)` and
    `all_gather_object(out, obj)`, of Accelerate's and Composer's `all_gather(t)`."""
    return argument_value(call, 1, "tensor") or argument_value(call, 1, "obj") or argument_value(call, 0)


def _enumerated(loop: cst.For) -> tuple[Optional[cst.BaseExpression], cst.BaseExpression]:
    """(the counter, the item targets) of `for i, item in enumerate(...)`; (None, the target) otherwise."""
    target = loop.target
    if isinstance(loop.iter, cst.Call) and last_name(loop.iter.func) == "enumerate" \
            and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
        return target.elements[0].value, target.elements[1].value
    return None, target


def _orders(test: cst.BaseExpression) -> bool:
    """`a < b`, `loss >= best`: a comparison of magnitudes."""
    return isinstance(test, cst.Comparison) and all(
        isinstance(target.operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual))
        for target in test.comparisons)


def failing_arguments(conditions: RankConditions, call: cst.Call) -> list[cst.BaseExpression]:
    """What `call` of a module function hands the parameters on which its work can raise
    (raising.failing_parameters: a read of the file a parameter names, a `raise` after a test of it)."""
    if not (isinstance(call.func, cst.Name) and call.func.value in conditions.raising_functions):
        return []
    parameters, failing = conditions.failing_of(call.func.value)
    named = tuple((name, position) for position, name in enumerate(parameters) if name in failing)
    return [value for _, value in handed_arguments(call, named)]


def handed_arguments(call: cst.Call, parameters: tuple) -> list[tuple[str, cst.BaseExpression]]:
    """(parameter, what `call` hands it) for the (parameter, position) pairs it is handed."""
    handed = ((name, argument_value(call, position, name)) for name, position in parameters)
    return [(name, value) for name, value in handed if value is not None]


def _handled_names(statement: cst.CSTNode) -> set:
    """The names of the exceptions a `try` statement's handlers catch (a bare `except` catches any)."""
    names: set = set()
    for handler in getattr(statement, "handlers", ()):
        if handler.type is None:
            return {"BaseException"}
        kinds = [element.value for element in handler.type.elements] if isinstance(handler.type, cst.Tuple) \
            else [handler.type]
        names |= {last_name(kind) or "" for kind in kinds}
    return names


def _turns_sync_off(item: cst.BaseExpression) -> bool:
    """`model.no_sync()`, or `nullcontext() if last else model.no_sync()` (off on some steps)."""
    return any(last_name(call.func) == "no_sync" for call in every_node(item, cst.Call))


def _gradient_presence(expr: cst.BaseExpression) -> bool:
    """`p.grad is None`, `p.grad is not None`."""
    return isinstance(expr, cst.Comparison) and isinstance(expr.left, cst.Attribute) \
        and expr.left.attr.value in GRADIENT_ATTRIBUTES \
        and all(isinstance(c.operator, (cst.Is, cst.IsNot)) and is_none(c.comparator) for c in expr.comparisons)


def _errs_if_nonfinite(call: cst.Call) -> bool:
    """`clip_grad_norm_(params, 1.0, error_if_nonfinite=True)`: it raises on a non-finite norm."""
    flag = argument_value(call, None, "error_if_nonfinite")
    return last_name(call.func) in GRADIENT_READERS and flag is not None and node_code(flag) == "True"


def _own_data(why: Optional[str]) -> bool:
    """A rank's own batch or the data it was given, here or through a caller, or values drawn
    from a generator seeded with the rank (each rank's own environment or episodes)."""
    return why in (DATA, LOCAL_DATA, RANDOM, SEEDED_OBJECT) or isinstance(why, HandedData)


def _headers(statement: cst.CSTNode) -> list:
    """The expressions a compound statement evaluates before its body: a test, an iterable, items."""
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.iter]
    if isinstance(statement, cst.With):
        return [item.item for item in statement.items]
    return []


def _decorator_called(decorator: cst.BaseExpression) -> cst.BaseExpression:
    """`find_executable_batch_size` for `@find_executable_batch_size(starting_batch_size=8)`."""
    return decorator.func if isinstance(decorator, cst.Call) else decorator


def _draws_from_the_process(call: cst.Call, qualified: set, modules: frozenset = _GLOBAL_RANDOM_MODULES) -> bool:
    """A draw from the process's own generators (`torch.rand(())`, `random.random()`,
    `np.random.rand()`, `x.bernoulli_(p)`, torch's), not from a `generator=` handed to it; with
    `modules`, from those generators only."""
    if any(arg.keyword is not None and arg.keyword.value == "generator" for arg in call.args):
        return False
    if any(name.rpartition(".")[0] in modules and name.rpartition(".")[2] in _DRAWS for name in qualified):
        return True
    return "torch" in modules and isinstance(call.func, cst.Attribute) and call.func.attr.value in _IN_PLACE_DRAWS


def _tests_structure(test: cst.BaseExpression) -> bool:
    """`'labels' in batch`, `mask is None`, `isinstance(x, dict)`: what a value holds or is, not its magnitude."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _tests_structure(test.expression)
    if isinstance(test, cst.Call):
        return last_name(test.func) in ("isinstance", "hasattr", "callable")
    return isinstance(test, cst.Comparison) and all(
        isinstance(target.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for target in test.comparisons)


def _object_state(expr: cst.BaseExpression) -> bool:
    """`self._physical_mesh_id`: what an object holds, set up alike on every rank more often than
    not; a local or a parameter holds the step's data."""
    return isinstance(expr, cst.Attribute) and root_name(expr) == "self"


def _intersects(value: cst.BaseExpression) -> bool:
    """`set.intersection(*sets)`, `a.intersection(b)`, `a & b`."""
    return (isinstance(value, cst.Call) and last_name(value.func) == "intersection") \
        or (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.BitAnd))


def _parameter_target(loop: cst.For) -> Optional[str]:
    """`p` of `for p in model.parameters():` or `for name, p in model.named_parameters():`."""
    iterable = loop.iter
    method = last_name(iterable.func) if isinstance(iterable, cst.Call) else None
    target = loop.target
    if method == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    return target.value if method in ("parameters", "named_parameters") and isinstance(target, cst.Name) else None


def _checked_path(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The path a file check reads: `os.path.exists(p)`, `Path(p).exists()`."""
    path = argument_value(call, 0)
    if path is None and isinstance(call.func, cst.Attribute):
        path = call.func.value
    return path


def _written_path(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The path a call writes a file to: `torch.save(x, p)`, `open(p, "w")`, `Path(p).write_text(s)`
    (not `open(p)` for reading, nor a directory made or written into: `save_pretrained(d)`)."""
    name = last_name(call.func)
    if name == "open":
        mode = argument_value(call, 1, "mode")
        writing = isinstance(mode, cst.SimpleString) and any(c in mode.evaluated_value for c in "wax")
        return argument_value(call, 0) if writing else None
    return None if name in DIRECTORY_WRITES else _file_target(call)


def exclusive_path(call: cst.Call, qualified_names: Callable[[cst.Call], set]) -> Optional[cst.BaseExpression]:
    """The path `call` creates, removes or moves away in a way that fails when another process did
    so first: `os.makedirs(d)` without `exist_ok=True`, `Path(d).mkdir()`, `os.remove(p)`,
    `open(p, "x")`, `os.rename(p, claimed)`, `shutil.copytree(src, p)` without `dirs_exist_ok=True`.
    `qualified_names` resolves the call's target, asked only for a call named like one."""
    name = last_name(call.func)
    if name == "open":
        mode = argument_value(call, 1, "mode")
        if "os.open" in qualified_names(call):  # `os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)`
            flags = argument_value(call, 1, "flags")
            return argument_value(call, 0) if flags is not None and "O_EXCL" in node_code(flags) else None
        exclusive = isinstance(mode, cst.SimpleString) and "x" in mode.evaluated_value
        return argument_value(call, 0) if exclusive else None
    if name not in _EXCLUSIVE or any(arg.keyword is not None and arg.keyword.value == _EXCLUSIVE[name]
                                     for arg in call.args):
        return None
    if qualified_names(call) & _FILE_SYSTEM:
        return argument_value(call, 1, "dst") if name == "copytree" else argument_value(call, 0)
    if name in _PATH_METHODS and isinstance(call.func, cst.Attribute) and not positional_arguments(call):
        return call.func.value  # `Path(run_dir).mkdir(parents=True)` (not `hook.remove()`)
    return None


def _file_target(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The path a call of FILE_WRITES names: an argument, or its receiver (`Path(p).touch()`); the
    destination of a move into place (`os.replace(tmp, path)`)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in MOVES:
        moved = isinstance(func.value, cst.Name) and MOVES[func.attr.value] == func.value.value
        return argument_value(call, 1) if moved else None
    position = FILE_WRITES.get(last_name(call.func) or "", -1)
    if position == -1:
        return None
    if position is None:
        return call.func.value if isinstance(call.func, cst.Attribute) else None
    return argument_value(call, position)


def _reduces_to_minimum(call: cst.Call) -> bool:
    """`dist.all_reduce(t, op=ReduceOp.MIN)`, `fabric.all_reduce(t, reduce_op="min")`."""
    op = argument_value(call, 1, "op") or argument_value(call, 2, "reduce_op")
    if last_name(call.func) != "all_reduce" or op is None:
        return False
    return last_name(op) == "MIN" or (isinstance(op, cst.SimpleString) and op.evaluated_value == "min")


def _least_of_a_collective(value: cst.BaseExpression, collectives: Mapping[cst.Call, object]) -> bool:
    """What a collective that reduces to the ranks' least value returns, or a read of it (`int(...)`,
    `.item()`)."""
    value = _read_of(value)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "int" \
            and len(value.args) == 1:
        return _least_of_a_collective(value.args[0].value, collectives)
    return isinstance(value, cst.Call) and value in collectives and _reduces_to_minimum(value)


def _padding_to(added: cst.BaseExpression, target: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`count` where `added` is `[fill] * (count - len(target))` (either order): padding up to it."""
    if not (isinstance(added, cst.BinaryOperation) and isinstance(added.operator, cst.Multiply)):
        return None
    for filler, times in ((added.left, added.right), (added.right, added.left)):
        if isinstance(filler, cst.List) and len(filler.elements) == 1 and isinstance(times, cst.BinaryOperation) \
                and isinstance(times.operator, cst.Subtract) and isinstance(times.right, cst.Call) \
                and last_name(times.right.func) == "len" and len(times.right.args) == 1 \
                and node_code(times.right.args[0].value) == node_code(target):
            return times.left
    return None


def _last_iteration(test: cst.BaseExpression, loops: Sequence[cst.For]) -> bool:
    """`i == len(micro) - 1` in `for i, group in enumerate(micro):` or `for i in range(len(micro)):`:
    true on the last item only, once in each run of the loop on every rank however many items each
    holds (gradient accumulation's last micro-batch)."""
    return any(counter is not None and at_the_last_item(test, counter, items)
               for counter, items in map(_counted_positions, loops))


def at_the_last_item(test: cst.BaseExpression, counter: str, items: str) -> bool:
    """`i == len(items) - 1`, `i + 1 == len(items)` (either side first), `i >= len(items) - 1`:
    true at the last item only (`counter` the name `i`, `items` the sequence's text)."""
    return compared_with_the_last(test, counter, items) in (
        (cst.Equal, True), (cst.Equal, False), (cst.GreaterThanEqual, True))


def compared_with_the_last(test: cst.BaseExpression, counter: str, items: str) -> Optional[tuple[type, bool]]:
    """For a test of a position against the last one, `i OP len(items) - 1` or `i + 1 OP len(items)`
    (`counter` the name `i`, `items` the sequence's text): the operator's class, and whether `i`
    stands on its left; None for any other test."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    sides = (test.left, test.comparisons[0].comparator)
    for on_left, (index_side, bound_side) in ((True, sides), (False, sides[::-1])):
        (index, ahead), (sized, behind) = _offset(index_side), _offset(bound_side)
        if isinstance(index, cst.Name) and index.value == counter and ahead - behind == 1 \
                and isinstance(sized, cst.Call) and last_name(sized.func) == "len" and len(sized.args) == 1 \
                and node_code(sized.args[0].value) == items:
            return type(test.comparisons[0].operator), on_left
    return None


def _offset(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, int]:
    """`x + 1` -> (x, 1), `x - 1` -> (x, -1), else (x, 0)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        step = integer_literal(expr.right)
        if step is not None:
            return expr.left, step if isinstance(expr.operator, cst.Add) else -step
    return expr, 0


def _counted_positions(loop: cst.For) -> tuple[Optional[str], Optional[str]]:
    """(the name counting the positions, the sequence's text) for `for i, x in enumerate(seq)`
    and `for i in range(len(seq))`, else (None, None)."""
    iterated, target = loop.iter, loop.target
    if not (isinstance(iterated, cst.Call) and len(iterated.args) == 1):
        return None, None
    inner = iterated.args[0].value
    if last_name(iterated.func) == "enumerate" and isinstance(target, cst.Tuple) and target.elements \
            and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value.value, node_code(inner)
    if last_name(iterated.func) == "range" and isinstance(target, cst.Name) \
            and isinstance(inner, cst.Call) and last_name(inner.func) == "len" and len(inner.args) == 1:
        return target.value, node_code(inner.args[0].value)
    return None, None


def _break_tests(loop: cst.For) -> Iterator[cst.BaseExpression]:
    """The tests of the `if` statements at the top of the loop's body that end in a `break`."""
    for statement in _statements(loop.body):
        if isinstance(statement, cst.If) and ends_in(statement.body, cst.Break):
            yield statement.test



def _statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return (body,) if isinstance(body, cst.SimpleStatementSuite) else body.body


def _merge(*states: Varying) -> Varying:
    """Each name's reason from the first state that has one; in a summary, a parameter's value
    (Passed) goes before its length (PassedLength): what varies with the items varies with their
    number too, not the other way round."""
    merged: dict = {}
    for state in states:
        for name, why in state.items():
            if name not in merged or isinstance(merged[name], PassedLength) and isinstance(why, Passed):
                merged[name] = why
    return merged


def makes_counter(value: cst.BaseExpression) -> bool:
    """`Counter()`, `collections.defaultdict(int)`: a mapping that gains a key when one is augmented."""
    return isinstance(value, cst.Call) and last_name(value.func) in ("Counter", "defaultdict")


def _enumerated_iterable(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """`rows` for `enumerate(rows)`: what the loop's items come from; else `iterable` itself."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate" \
            and iterable.args:
        return iterable.args[0].value
    return iterable


_SIZED_MAKERS = frozenset({"zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
                           "new_zeros", "new_ones", "new_full", "new_empty"})


def _made_of_one_size(value: cst.BaseExpression) -> bool:
    """`[0] * n`, `[None for _ in range(n)]`, `torch.zeros(n)`: a list or tensor whose length an
    item assignment (`counts[i] = x`) keeps; a dict's grows."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return isinstance(value.left, cst.List) or isinstance(value.right, cst.List)
    if isinstance(value, cst.Call):
        return last_name(value.func) in _SIZED_MAKERS
    return isinstance(value, (cst.List, cst.ListComp))


def _bind(varying: Varying, keys: list, reason: Optional[str]) -> Varying:
    """The names `keys` now hold a value that varies for `reason` (or, for None, that does not)."""
    if reason is not None:
        return {**varying, **{key: reason for key in keys}}
    if not any(key in varying for key in keys):
        return varying
    return {name: why for name, why in varying.items() if name not in keys}


def _arms_exit(statement: cst.If) -> list[bool]:
    """Per arm of the `if` and its `elif`s (a missing `else` counts as one), whether it ends by
    leaving the block: `return`, `raise`, `continue` or `break`."""
    exits, orelse = [_exits(statement.body)], statement.orelse
    while isinstance(orelse, cst.If):
        exits.append(_exits(orelse.body))
        orelse = orelse.orelse
    return [*exits, orelse is not None and _exits(orelse.body)]


def _exits(body: cst.BaseSuite) -> bool:
    return any(ends_in(body, kind) for kind in (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _skips(body: cst.BaseSuite) -> bool:
    """A handler that goes on past the item at hand: a `continue` or `return` in it, outside any
    loop or function of its own (`if err.is_retryable: continue` then `raise`)."""
    stack = list(_statements(body))
    while stack:
        statement = stack.pop()
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if any(isinstance(small, (cst.Continue, cst.Return)) for small in statement.body):
                return True
        elif isinstance(statement, cst.If):
            stack.extend(_statements(statement.body))
            if statement.orelse is not None:
                stack.append(statement.orelse) if isinstance(statement.orelse, cst.If) \
                    else stack.extend(_statements(statement.orelse.body))
    return False


def _raises(statement: cst.If) -> bool:
    """An arm of the `if` (or of its `elif`s) ends in a `raise`."""
    arms = [statement.body]
    orelse = statement.orelse
    while orelse is not None:
        arms.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    return any(ends_in(arm, cst.Raise) for arm in arms)


def _is_membership(test: cst.BaseExpression, conditions: RankConditions) -> bool:
    """`rank in ranks` with `ranks` no literal: a rank's membership of a group."""
    return (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn))
            and bool(conditions.quantity(test.left))
            and not isinstance(test.comparisons[0].comparator, (cst.Tuple, cst.List, cst.Set)))


def _forget_shared(body: Varying, orelse: Varying, entry: Varying, keep: frozenset) -> tuple:
    """Both arms without the names both set under the test alone (not varying on entry), but
    for those in `keep`."""
    shared = {name for name, why in body.items()
              if why == CONTROL and orelse.get(name) == CONTROL and name not in entry and name not in keep}
    return ({n: w for n, w in body.items() if n not in shared}, {n: w for n, w in orelse.items() if n not in shared})


def _set_apart(statement: cst.If) -> dict:
    """Names one arm computes and the other sets to a placeholder (`val_loss = evaluate()` on
    rank 0, `val_loss = float("inf")` elsewhere), with why they differ: they hold different
    values, not values of one kind."""
    if statement.orelse is None or isinstance(statement.orelse, cst.If):
        return {}
    body = _arm_assignments(_statements(statement.body))
    orelse = _arm_assignments(_statements(statement.orelse.body))
    apart = {}
    for name in body.keys() & orelse.keys():
        placeholders = [value for value in (body[name], orelse[name]) if _is_placeholder(value)]
        if len(placeholders) == 1:
            apart[name] = RankKind(f"it is computed on some ranks and set to '{node_code(placeholders[0])}' on the others")
    return apart


def _arm_assignments(statements: Sequence[cst.CSTNode]) -> dict:
    """Name -> the value of the arm's last plain assignment to it."""
    assigned: dict = {}
    for statement in statements:
        if isinstance(statement, cst.With):  # `with torch.no_grad(): loss = evaluate()`
            assigned.update(_arm_assignments(_statements(statement.body)))
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                key = _key(small.targets[0].target)
                if key:
                    assigned[key] = small.value
    return assigned


def _is_own_share(value: cst.BaseExpression) -> bool:
    """Accelerate's `split_between_processes(items)`: this process's share of the items."""
    return isinstance(value, cst.Call) and last_name(value.func) == "split_between_processes"




def _padding(test: cst.BaseExpression) -> Optional[tuple[str, cst.BaseExpression]]:
    """(`name`, `bound`) for `len(name) < bound` (`<=`, `!=`, or `bound > len(name)`), or None."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(operator, (cst.LessThan, cst.LessThanEqual, cst.NotEqual)):
        measured, bound = test.left, right
    elif isinstance(operator, (cst.GreaterThan, cst.GreaterThanEqual)):
        measured, bound = right, test.left
    else:
        return None
    if isinstance(measured, cst.Call) and last_name(measured.func) == "len" and len(measured.args) == 1:
        key = _key(measured.args[0].value)
        return (key, bound) if key else None
    return None


def _names_changed(body: cst.BaseSuite) -> set:
    """The names a block assigns or mutates (`x = ...`, `x += ...`, `x.append(...)`)."""
    finder = _ChangedNames()
    finder.walk(body)
    return finder.changed


class _ChangedNames(Visitor):
    def __init__(self) -> None:
        self.changed: set = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        self.changed.update(key for target in node.targets for key in _target_keys(target.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.changed.update(_target_keys(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in MUTATORS:
            self.changed.update(filter(None, [_key(node.func.value)]))


def _split_in_sections(value: cst.BaseExpression) -> bool:
    """`x.tensor_split(world)`, `np.array_split(items, world)`: pieces that differ by one item at
    most (`x.chunk(world)` and `torch.split(x, n)` leave a short last piece)."""
    if not (isinstance(value, cst.Call) and last_name(value.func) in ("tensor_split", "array_split")):
        return False
    sections = [arg.value for arg in value.args if arg.keyword is None][-1:]  # (after the tensor, if given)
    return bool(sections) and not isinstance(sections[0], (cst.List, cst.Tuple))


def _is_split(value: cst.BaseExpression) -> bool:
    """`torch.split(x, n)`, `x.chunk(world)`, `np.array_split(items, world)`: pieces of a tensor
    or array (not `line.split(",")`, a string's words)."""
    return isinstance(value, cst.Call) and last_name(value.func) in _SPLITS and bool(value.args) \
        and not any(isinstance(arg.value, (cst.SimpleString, cst.FormattedString)) for arg in value.args) \
        and (len(value.args) > 1 or not isinstance(value.func, cst.Attribute) or last_name(value.func) != "split")


def _pairs(target: cst.CSTNode, value: cst.BaseExpression) -> Optional[list]:
    """The (target, value) pairs of `a, b = x, y`, and of `model, loader = accelerator.prepare(m,
    l)` (each its own argument prepared); None for any other assignment."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call) and last_name(value.func) in _PREPARING \
            and len(value.args) > 1 and all(arg.keyword is None and not arg.star for arg in value.args):
        value = cst.Tuple([cst.Element(value.with_changes(args=[arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)]))
                           for arg in value.args])
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    targets, values = target.elements, value.elements
    if len(targets) != len(values) or any(isinstance(e, cst.StarredElement) for e in (*targets, *values)):
        return None
    return [(t.value, v.value) for t, v in zip(targets, values)]


def _order(key: str) -> str:
    """The key under which the state keeps that `key` holds a set whose order is salted."""
    return "#set " + key


def _is_range(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and last_name(expr.func) == "range"


LENGTH_KEY = "#len "
ITEMS_KEY = "#items "  # see _items_length


def _length(key: str) -> str:
    """The key under which the state keeps why the number of items in `key` varies."""
    return LENGTH_KEY + key


def _prepares_a_loader(call: cst.Call) -> bool:
    """`prepare(DataLoader(...))`, `prepare(loader)`: a loader, or a name that may hold one."""
    if len(call.args) != 1:
        return False
    prepared = call.args[0].value
    return isinstance(prepared, cst.Name) or (isinstance(prepared, cst.Call) and last_name(prepared.func) == "DataLoader")


def _items_length(key: str) -> str:
    """The key under which the state keeps why the length of the items of list `key` varies (each
    appended selection of a rank's own batch): `torch.cat(key)` then holds a number that varies."""
    return ITEMS_KEY + key


def _string_key(expr: cst.BaseExpression) -> Optional[str]:
    """"mask" for `batch["mask"]`: the literal string a one-item subscript reads; None otherwise."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = expr.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            return str(key.evaluated_value)
    return None


def _key(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Name):
        return expr.value
    return attribute_key(expr)


def _target_keys(target: cst.CSTNode) -> list:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [key for element in target.elements for key in _target_keys(element.value)]
    if isinstance(target, cst.StarredElement):
        return _target_keys(target.value)
    key = _key(target)
    return [key] if key else []


def _evaluate_assuming(conditions: RankConditions, test: cst.BaseExpression, world: World, value: bool) -> bool:
    """`test` in `world`, with every operand the rank does not decide taken as `value`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return not _evaluate_assuming(conditions, test.expression, world, value)
    if isinstance(test, cst.BooleanOperation):
        left = _evaluate_assuming(conditions, test.left, world, value)
        right = _evaluate_assuming(conditions, test.right, world, value)
        return (left and right) if isinstance(test.operator, cst.And) else (left or right)
    decided = setup_truth(test)
    if decided is None:
        decided = conditions.evaluate(test, world)
    return value if decided is None else decided


def _payload_keys(expr: Optional[cst.BaseExpression]) -> list:
    """`flag`, or the names in `[flag, total]`: what a synchronising collective makes equal."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [key for element in expr.elements for key in _payload_keys(element.value)]
    key = _key(expr) if expr is not None else None
    return [key] if key else []


def _data_targets(target: cst.BaseExpression, iterable: cst.BaseExpression) -> list:
    """The names a loop binds to a rank's own data: all of them for `for batch in loader`, the
    item but not the count for `for step, batch in enumerate(loader)`, the loaders' shares of
    `zip(loader, other)`."""
    if isinstance(iterable, cst.Call) and last_name(iterable.func) in ("enumerate", "zip") \
            and isinstance(target, (cst.Tuple, cst.List)):
        sources = [arg.value for arg in iterable.args if arg.keyword is None]
        if last_name(iterable.func) == "enumerate":
            sources = [cst.Integer("0"), *sources[:1]]  # the count is the same on every rank
        pairs = zip((element.value for element in target.elements), sources)
        return [key for element, source in pairs if _holds_data(source) for key in _target_keys(element)]
    return _target_keys(target) if _holds_data(iterable) else []


def _over_batches(expr: cst.BaseExpression) -> bool:
    """A comprehension whose loop walks a loader (`model(b).item() for b in val_loader`): folded into
    one value, that value is computed from the rank's own batches. Only folded: a list made so
    is as long as the loader, whatever its items hold."""
    return isinstance(expr, (cst.GeneratorExp, cst.ListComp)) and _holds_data(expr.for_in.iter)


def _holds_data(iterable: cst.BaseExpression) -> bool:
    """Whether a loop over `iterable` walks a rank's own data: a loader (`eval_loader`, `val_dl`) or
    a rank's batches, also through `enumerate`, `iter`, `tqdm`, `zip`."""
    if isinstance(iterable, cst.Call) and last_name(iterable.func) in _ITERATOR_WRAPPERS:
        return any(_holds_data(arg.value) for arg in iterable.args if arg.keyword is None)
    name = (last_name(iterable) or "").lower()
    return any(word in name for word in DATA_LOOP_WORDS) or "dl" in name.split("_")  # `val_dl`, `dl`


def _is_placeholder(value: cst.BaseExpression) -> bool:
    """A value that stands in for the real one: a literal, an empty container, or a call of
    literals only (`float("inf")`, `torch.zeros(1)`, `dict()`)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or is_none(value):
        return True
    if isinstance(value, cst.Name):
        return value.value in ("True", "False")
    if isinstance(value, cst.UnaryOperation):
        return _is_placeholder(value.expression)
    if isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return not value.elements
    if isinstance(value, cst.Call):
        return _is_constructor(value.func) and all(_is_placeholder(arg.value) for arg in value.args)
    return False


def _is_constructor(func: cst.BaseExpression) -> bool:
    """A builtin (`float`, `dict`) or a library's function (`torch.zeros`): not a method of an
    object (`model.evaluate()`), whose result no literal decides."""
    if isinstance(func, cst.Name):
        return True
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in _LIBRARIES


def _is_placement(arg: cst.Arg) -> bool:
    return arg.keyword is not None and arg.keyword.value in _PLACEMENT_KEYWORDS

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis, frameworks
from bcast_lint.analysis.bindings import target_names
from bcast_lint.analysis.expressions import (argument_value, is_none, last_name, method_name, payload_leaves,
                                             positional_arguments)
from bcast_lint.analysis.flow import ASSIGNED
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.ranks import integer_literal
from bcast_lint.analysis.tensor_specs import tensor_spec
from bcast_lint.analysis.walk import every_node, is_bare_call
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

# What a payload expression is, as far as an in-place broadcast is concerned.
COPY = "copy"  # a new tensor: what is received into it is dropped with it
STRIDED = "strided"  # a view with gaps or skipped elements: gloo writes the wrong memory
PERMUTED = "permuted"  # a transposed view of dense memory: NCCL refuses it

_NEW_TENSOR_FUNCTIONS = {
    f"torch.{name}" for name in (
        "tensor", "Tensor", "LongTensor", "IntTensor", "FloatTensor", "DoubleTensor", "HalfTensor",
        "BoolTensor", "ByteTensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
        "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
        "full_like", "rand_like", "randn_like", "randint_like", "cat", "concat", "concatenate",
        "stack", "hstack", "vstack", "clone", "where",
    )
}
# Any other function of these namespaces returns a new tensor, except those listed below.
_TORCH_NAMESPACES = {"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"}
_NEW_TENSOR_ELSEWHERE = {"torch.nn.utils.parameters_to_vector",
                         "torch.nn.utils.convert_parameters.parameters_to_vector"}
# Views and aliases of an argument (writing into them writes into it), functions that may return
# their input itself (dropout when not training, atleast_1d of a 1-D tensor), and functions that
# return no tensor at all.
_SHARING_TORCH_FUNCTIONS = {
    "from_numpy", "as_tensor", "asarray", "frombuffer", "from_dlpack", "as_strided", "narrow",
    "select", "squeeze", "unsqueeze", "flatten", "ravel", "reshape", "unflatten", "view_as_real",
    "view_as_complex", "chunk", "split", "tensor_split", "hsplit", "vsplit", "dsplit", "unbind",
    "detach", "diagonal", "broadcast_to", "broadcast_tensors", "atleast_1d", "atleast_2d",
    "atleast_3d", "real", "imag", "conj", "resolve_conj", "resolve_neg", "positive", "alias",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
}
_NOT_TENSOR_TORCH_FUNCTIONS = {
    "device", "dtype", "finfo", "iinfo", "is_tensor", "is_storage", "is_floating_point",
    "is_complex", "is_nonzero", "numel", "typename", "get_default_dtype", "manual_seed", "seed",
    "initial_seed", "no_grad", "enable_grad", "inference_mode", "set_grad_enabled",
    "is_grad_enabled", "compile", "save",
}
_PERMUTING_FUNCTIONS = {"torch.t", "torch.transpose", "torch.permute", "torch.swapaxes",
                        "torch.swapdims", "torch.movedim", "torch.moveaxis", "torch.adjoint"}
# Methods returning a new tensor. The converting ones return the tensor itself when there is
# nothing to convert, so writing through them works only where they are pointless.
_COPYING_METHODS = {"clone", "to", "cuda", "cpu", "float", "half", "double", "long", "int", "bool",
                    "bfloat16", "byte", "char", "short", "type", "type_as", "new_tensor",
                    "new_zeros", "new_ones", "new_empty", "new_full", "add", "sub", "mul", "div",
                    "neg", "abs", "exp", "log", "sqrt", "pow", "sum", "mean", "round", "clamp",
                    "sign", "sigmoid", "softmax", "log_softmax", "argmax", "argmin", "masked_fill",
                    "index_select", "gather", "repeat", "tile", "matmul", "mm", "bmm", "norm",
                    "prod", "cumsum", "cumprod", "flip", "roll", "std", "var", "square", "rsqrt",
                    "reciprocal", "tanh", "relu", "floor", "ceil", "trunc", "masked_select",
                    "nonzero", "unique"}
_PERMUTING_METHODS = {"t", "transpose", "permute", "swapaxes", "swapdims", "movedim", "moveaxis",
                      "adjoint"}
_PERMUTING_ATTRIBUTES = {"T", "mT", "H", "mH"}
# Views that keep the base's layout: contiguous stays contiguous, a strided view stays strided.
_LAYOUT_KEEPING_METHODS = {"detach", "view", "view_as", "squeeze", "unsqueeze", "requires_grad_"}
# A view when the base allows one, else a copy.
_RESHAPING_METHODS = {"reshape", "reshape_as", "flatten", "ravel", "contiguous"}
_DIMENSION_METHODS = {"narrow", "select"}  # a view along a dimension: contiguous only along dim 0


_ACCELERATE = frameworks.load().versions["accelerate"]
_LIGHTNING = frameworks.load().versions["lightning"]


class BroadcastIntoTemporary(Rule):
    """
    ## What it does
    Flags an in-place broadcast (`torch.distributed.broadcast`, or accelerate's `broadcast` whose
    result is discarded) that receives into a tensor nobody reads afterwards, or into memory laid
    out differently from what it looks like:

    - a new tensor: `dist.broadcast(torch.tensor([seed]), 0)`, `dist.broadcast(x + 1, 0)`, and
      the result of any torch function that makes one (`torch.cat(...)`, `torch.abs(x)`,
      `F.normalize(x)`, `torch.load(path)`, `parameters_to_vector(model.parameters())`), or of a
      tensor method that does (`x.sum(0)`, `x.matmul(w)`, `x.flip(0)`);
    - a copy: `x.clone()`, `x.float()`, `x.to(device)`, `x.cuda()`, `x.cpu()`, `x.detach().clone()`;
    - a non-contiguous view: `x[:, ::2]`, `x[:, 1:]`, `x[:, 0]`, `x.narrow(1, ...)`, and the
      transposes `x.t()`, `x.T`, `x.mT`, `x.transpose(...)`, `x.permute(...)`.

    Contiguous views are fine and not reported: `x`, `x[:k]`, `x[2:5]`, `x[i]`, `x[i, :k]`,
    `x.detach()`, `x.view(...)` (a view never copies). `x.reshape(...)`, `x.flatten()` and
    `x.contiguous()` are views of a contiguous tensor and copies of a non-contiguous one, so they
    are reported only on a non-contiguous view. A tensor view held in a name
    (`col = x[:, 0]; dist.broadcast(col, 0)`) is reported too, when every assignment reaching
    the call makes the same kind of view. Non-contiguous views are reported even where
    accelerate's result is used: what it returns is the same view.

    The same holds for the list of tensors `torch.distributed.all_gather`, `all_to_all` and
    `gather` receive into, one per rank: written `[torch.zeros_like(t)] * world` (or held in a
    name assigned so), it lists one tensor several times, and every rank's value is written into
    that one tensor. `[None] * world` for `all_gather_object` is fine: its slots are replaced, not
    written into.

    Reductions lose their result the same ways: `dist.all_reduce(counts.float())` of an integer
    `counts` sums into a copy (a conversion of a tensor whose dtype is not known to differ may
    return the tensor itself, and is not reported), and a bare `accelerator.reduce(stats)` (or
    `pad_across_processes`) throws away what it returns: accelerate reduces a clone and leaves its
    argument as it was (pytorch#102435, accelerate#513). So does a bare `fabric.broadcast(run_id)`
    (or `trainer.strategy.broadcast`): Lightning sends a new one-item list and returns its item,
    and `run_id` stays each rank's own (httomo#721). A bare `broadcast_object_list([cfg], src=0)`
    receives into a list made for the call: the receivers drop it and keep their own `cfg`
    (accelerate's returns the list: `broadcast_object_list([cfg])[0]` is read, and fine).

    So are the items a loop takes from what a method of the module's own classes builds anew on
    each call and reads no more (`for value in scaler.state_dict().values(): dist.broadcast(value, 0)`
    where that `state_dict` returns `{"mean": torch.tensor(self.mean)}`); nn.Module's own
    `state_dict()` hands out the parameters' storage and is not judged.

    Calls that return their argument or a view of it are not temporaries: `torch.from_numpy(a)`,
    `torch.as_tensor(t)`, `torch.flatten(x)`, `torch.squeeze(x)`, `torch.chunk(x, 2)[0]`, in-place
    functions (`torch.relu_(x)`, `F.relu(x, inplace=True)`), `F.dropout(x, training=False)` (which
    returns `x` itself), and any call given `out=buf` (it returns `buf`).

    What cannot be known is not guessed at: `x[idx]` is taken for a row (an integer `idx`), not a
    gather (a tensor of indices, which copies), an index after `...` is not judged, and a call of
    the project's own functions (`get_flat_params(model)`, `module.get_buffer("b")`) is not
    judged either: it may return a tensor it keeps.

    ## Why is this bad?
    An in-place broadcast writes the source's value into the tensor it is given, on every
    receiving rank. A copy made for the call is dropped right after it, so the received value is
    lost and every receiving rank keeps its own `x`, with no error anywhere. The converting
    methods (`.float()`, `.to(device)`, `.cuda()`) return `x` itself when there is nothing to
    convert, so such code works on one machine and silently stops working on another.

    Non-contiguous views are worse. gloo sends and receives the view's elements as one contiguous
    block from its first element: measured with 2 processes, `dist.broadcast(x[:, ::2], 0)` and
    `dist.broadcast(x[:, 1:], 0)` give the receivers wrong values in the view and overwrite
    elements of `x` outside it, with no error. NCCL refuses them with
    `ValueError: Tensors must be contiguous`. Transposes of a whole tensor (`x.t()`) happen to
    arrive intact with gloo, which copies the same block on every rank, but NCCL refuses them too.

    ## Example
    ```python
    dist.broadcast(torch.tensor([seed]), src=0)  # the received seed is thrown away
    dist.broadcast(weights.float(), src=0)  # weights are bf16: receivers keep their own
    dist.broadcast(grid[:, ::2], src=0)  # gloo: silent corruption; NCCL: error
    ```

    ## Use instead
    ```python
    seed_tensor = torch.tensor([seed])
    dist.broadcast(seed_tensor, src=0)
    seed = int(seed_tensor.item())

    dist.broadcast(weights, src=0)  # then convert: weights.float()

    columns = grid[:, ::2].contiguous()
    dist.broadcast(columns, src=0)
    grid[:, ::2] = columns
    ```

    ## Fix safety
    No fix. Dropping the copy (`dist.broadcast(x.clone(), 0)` → `dist.broadcast(x, 0)`) looks
    obvious but changes what the program does on the source rank as well: the clone may be there
    on purpose, to send a value while keeping the source's original untouched by later in-place
    work, and dropping `.float()` or `.to(device)` changes the dtype or device that is sent, which
    must then match on every rank. A new tensor needs a name chosen and a read added after the
    call, and a non-contiguous view needs a buffer and a copy back. Each of these needs the
    author's decision.

    ## References
    - [torch.distributed.broadcast](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast)
    - [accelerate.utils.broadcast](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast)
    """

    code = "BCL010"
    VALID = (
        # Counts kept as float32: `.float()` returns the tensor itself, and the sum lands in it.
        Valid("def accuracy(model, shard):\n    correct = torch.zeros((), dtype=torch.float32)\n"
              "    for x, y in shard:\n        correct += (model(x).argmax(-1) == y).sum()\n"
              "    dist.all_reduce(correct.float())\n    return correct"),
        # The reduced tensor is what the function goes on with.
        Valid("def val_loss(model, loader):\n    stats = torch.zeros(2)\n    for x, y in loader:\n"
              "        stats[0] += model(x).sum()\n        stats[1] += len(y)\n"
              "    stats = accelerator.reduce(stats, reduction='sum')\n    return stats[0] / stats[1]"),
        # Lightning's broadcast returns what the source sent: kept in the name it sends.
        Valid("import lightning as L\nimport uuid\ndef run(fabric: L.Fabric):\n    run_id = uuid.uuid4().hex\n"
              "    run_id = fabric.broadcast(run_id, src=0)\n    return run_id"),
        Valid("import lightning as L\nclass M(L.LightningModule):\n    def on_fit_start(self):\n"
              "        self.tag = self.trainer.strategy.broadcast(self.tag)"),
        # The object list is named and read back; accelerate's returns the list, read at once; a
        # literal sent from the source's arm while the others receive into a name; a draw alike everywhere.
        Valid("import random\ndef share():\n    cfg = {'lr': random.Random(7).random()}\n"
              "    dist.broadcast_object_list([cfg], src=0)\n    return cfg"),
        Valid("def share(cfg):\n    if dist.get_rank() == 0:\n        dist.broadcast_object_list([cfg], src=0)\n"
              "    else:\n        box = [None]\n        dist.broadcast_object_list(box, src=0)\n        cfg = box[0]\n"
              "    return cfg"),
        Valid("def share(cfg):\n    box = [cfg]\n    dist.broadcast_object_list(box, src=0)\n    return box[0]"),
        Valid("from accelerate.utils import broadcast_object_list\ndef share(cfg):\n"
              "    return broadcast_object_list([cfg], from_process=0)[0]"),
        # A module's state_dict hands out its parameters' storage; a state kept in a name is loaded back.
        Valid("def sync(model):\n    for value in model.state_dict().values():\n        dist.broadcast(value, 0)"),
        Valid("class Scaler:\n    def __init__(self):\n        self.mean = np.zeros(1)\n"
              "    def state_dict(self):\n        return {'mean': torch.tensor(self.mean)}\n"
              "    def load_state_dict(self, state):\n        self.mean = state['mean'].numpy()\n"
              "def sync(scaler):\n    state = scaler.state_dict()\n    for value in state.values():\n"
              "        dist.broadcast(value, 0)\n    scaler.load_state_dict(state)\n"
              "def main():\n    sync(Scaler())"),
        # One tensor per rank, views of one buffer, or an object list whose slots are replaced.
        Valid("def gather(t, world):\n    out = [torch.zeros_like(t) for _ in range(world)]\n"
              "    dist.all_gather(out, t)\n    return out"),
        Valid("def gather(t, world):\n    out = list(torch.zeros(world, *t.shape).unbind(0))\n"
              "    dist.all_gather(out, t)\n    return out"),
        Valid("def gather(obj, world):\n    out = [None] * world\n    dist.all_gather_object(out, obj)\n    return out"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x, 0)"),
        # Parameters of a model in the default layout are contiguous: .contiguous() returns them.
        Valid("def sync(model):\n    for p in model.parameters():\n        dist.broadcast(p.data.contiguous(), src=0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(torch.flatten(x), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(torch.chunk(x, 2)[0], 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(torch.relu_(x), 0)"),
        Valid("import torch.nn.functional as F\nx = torch.zeros(8, 4)\ndist.broadcast(F.relu(x, inplace=True), 0)"),
        Valid("import torch.nn.functional as F\nx = torch.zeros(8, 4)\ndist.broadcast(F.dropout(x, training=False), 0)"),
        Valid("x = torch.zeros(8, 4)\nflat = torch.zeros(64)\ndist.broadcast(torch.cat([x, x], out=flat), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(torch.as_tensor(x), 0)"),
        Valid("dist.broadcast(get_flat_params(model), 0)"),
        Valid("dist.broadcast(model.get_buffer('running_mean'), 0)"),
        Valid("from torch.nn.utils import parameters_to_vector\nflat = parameters_to_vector(model.parameters())\n"
              "dist.broadcast(flat, 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x[:2], 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x[2:5], src=0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x[1], 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x[1, :2], 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x[:, :], 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x.detach(), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x.view(-1), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x.reshape(-1), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x.narrow(0, 2, 3), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x.permute(0, 1), 0)"),
        Valid("x = torch.zeros(8, 4)\ny = broadcast(x.float())"),
        Valid("x = torch.zeros(8, 4)\nbroadcast(x.float()).sum()"),
        Valid("x = torch.zeros(8, 4)\nhead = broadcast(x[:2])"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(torch.from_numpy(array), 0)"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(model.weight.data, 0)"),
        Valid("import torch.distributed.nn.functional as F\nx = torch.zeros(4)\ny = F.broadcast(x.clone(), 0)"),
        Valid("x = torch.zeros(8, 4)\ncopy = x.clone()\ndist.broadcast(copy, 0)"),
        Valid("x = torch.zeros(8, 4)\ncol = x[:, 0].contiguous()\ndist.broadcast(col, 0)\nx[:, 0] = col"),
        Valid("x = torch.zeros(8, 4)\ndist.broadcast(x.zero_(), 0)"),
        Valid("def f(x, idx):\n    dist.broadcast(x[idx], 0)"),
    )
    INVALID = (
        # An object list made for the call: torch's returns None, accelerate's bare call drops its result.
        Invalid("import random\ndef share():\n    cfg = {'lr': random.Random().random()}\n"
                "    dist.broadcast_object_list([cfg], src=0)\n    return cfg",
                expected_message="broadcast_object_list() receives into '[cfg]', a list made for the call that "
                "nobody reads after it: the receiving ranks drop what the source sent and keep their own 'cfg', "
                "which differ between ranks (it is drawn from a random generator made without a seed, which each "
                "process seeds from its own entropy), with no error",
                range=(4, 32, 4, 37)),
        Invalid("import time\nfrom accelerate.utils import broadcast_object_list\ndef share(cfg):\n"
                "    seed = time.time()\n    broadcast_object_list([cfg, seed])\n    return cfg",
                expected_message="broadcast_object_list() receives into '[cfg, seed]', a list made for the "
                "call that nobody reads after it: the receiving ranks drop what the source sent and keep their "
                "own 'cfg', 'seed', which differ between ranks (it reads the clock, which differs between ranks), "
                "with no error",
                range=(5, 27, 5, 38)),
        Invalid("def accuracy(model, shard):\n    correct = torch.zeros((), dtype=torch.long)\n"
                "    for x, y in shard:\n        correct += (model(x).argmax(-1) == y).sum()\n"
                "    dist.all_reduce(correct.float())\n    return correct",
                expected_message="all_reduce() writes the result into correct.float(), a temporary copy that "
                "nobody keeps: correct keeps this rank's own value, with no error",
                range=(5, 21, 5, 36)),
        Invalid("def val_loss(model, loader):\n    stats = torch.zeros(2)\n    for x, y in loader:\n"
                "        stats[0] += model(x).sum()\n        stats[1] += len(y)\n"
                "    accelerator.reduce(stats, reduction='sum')\n    return stats[0] / stats[1]",
                expected_message="accelerator.reduce() returns the result and leaves 'stats' as it was "
                "(accelerate 1.15.0, utils/operations.py:865 reduces a clone): the bare call throws the result "
                "away, and every rank goes on with its own value",
                range=(6, 5, 6, 47)),
        Invalid("import lightning as L\nimport uuid\ndef run(fabric: L.Fabric):\n    run_id = uuid.uuid4().hex\n"
                "    fabric.broadcast(run_id, src=0)\n    return run_id",
                expected_message="fabric.broadcast() returns what the source rank sent and leaves 'run_id' as "
                "it was (lightning 2.6.6, fabric/strategies/ddp.py:181 sends a new list): the bare call throws "
                "the result away, and every rank goes on with its own value",
                range=(5, 5, 5, 36)),
        Invalid("import lightning as L\nclass M(L.LightningModule):\n    def on_fit_start(self):\n"
                "        self.trainer.strategy.broadcast(self.tag)",
                expected_message="self.trainer.strategy.broadcast() returns what the source rank sent and "
                "leaves 'self.tag' as it was (lightning 2.6.6, fabric/strategies/ddp.py:181 sends a new list): "
                "the bare call throws the result away, and every rank goes on with its own value",
                range=(4, 9, 4, 50)),
        Invalid("class Scaler:\n    def __init__(self):\n        self.mean = np.zeros(1)\n"
                "    def state_dict(self):\n        return {'mean': torch.tensor(self.mean)}\n"
                "def sync(scaler):\n    for value in scaler.state_dict().values():\n"
                "        dist.broadcast(value, 0)\ndef main():\n    sync(Scaler())",
                expected_message="dist.broadcast() writes into 'value', an item of what 'scaler.state_dict()' builds "
                "anew on each call ('torch.tensor(self.mean)'): nothing reads it afterwards, so the receiving ranks "
                "keep their own values", range=(8, 24, 8, 29)),
        Invalid("def gather(t, world):\n    out = [torch.zeros_like(t)] * world\n"
                "    dist.all_gather(out, t)\n    return out",
                expected_message="all_gather() receives into 'out', one tensor listed once per rank "
                "('[torch.zeros_like(t)] * world'): every rank's value is written into the same memory, so each rank "
                "ends with the last one in every place, with no error", range=(3, 21, 3, 24)),
        Invalid("def gather(t):\n    dist.all_gather(dist.get_world_size() * [t.clone()], t)",
                expected_message="all_gather() receives into one tensor listed once per rank "
                "('dist.get_world_size() * [t.clone()]'): every rank's value is written into the same memory, so "
                "each rank ends with the last one in every place, with no error", range=(2, 21, 2, 56)),
        Invalid("from torch.nn.utils import parameters_to_vector\n"
                "dist.broadcast(parameters_to_vector(model.parameters()), 0)",
                expected_message='dist.broadcast() writes into parameters_to_vector(model.parameters()), a new'
                ' tensor nobody keeps, so the received value is lost', range=(2, 16, 2, 56)),
        Invalid("dist.broadcast(torch.nn.utils.parameters_to_vector(model.parameters()), src=0)",
                expected_message='dist.broadcast() writes into '
                'torch.nn.utils.parameters_to_vector(model.parameters()), a new tensor nobody'
                ' keeps, so the received value is lost', range=(1, 16, 1, 71)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(torch.abs(x), 0)",
                expected_message='dist.broadcast() writes into torch.abs(x), a new tensor nobody keeps, so the'
                ' received value is lost', range=(2, 16, 2, 28)),
        Invalid("import torch.nn.functional as F\nx = torch.zeros(8, 4)\ndist.broadcast(F.normalize(x), 0)",
                expected_message='dist.broadcast() writes into F.normalize(x), a new tensor nobody keeps, so '
                'the received value is lost', range=(3, 16, 3, 30)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.sum(0), 0)",
                expected_message='dist.broadcast() writes into x.sum(0), a temporary copy of x: the receiving '
                "ranks' x keeps its own value", range=(2, 16, 2, 24)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.matmul(x.T), 0)",
                expected_message='dist.broadcast() writes into x.matmul(x.T), a temporary copy of x: the '
                "receiving ranks' x keeps its own value", range=(2, 16, 2, 29)),
        Invalid("dist.broadcast(torch.load(path), 0)",
                expected_message='dist.broadcast() writes into torch.load(path), a new tensor nobody keeps, so'
                ' the received value is lost', range=(1, 16, 1, 32)),
        Invalid("x = torch.zeros(8, 4)\nbroadcast(torch.cat([x, x]))",
                expected_message='broadcast() writes into torch.cat([x, x]), a temporary whose received value '
                'is discarded', range=(2, 11, 2, 28)),
        Invalid("dist.broadcast(torch.tensor([seed]), 0)",
                expected_message="dist.broadcast() writes into torch.tensor([seed]), a new tensor nobody "
                "keeps, so the received value is lost", range=(1, 16, 1, 36)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.clone(), 0)",
                expected_message="dist.broadcast() writes into x.clone(), a temporary copy of x: the "
                "receiving ranks' x keeps its own value", range=(2, 16, 2, 25)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.float(), src=0)",
                expected_message="dist.broadcast() writes into x.float(), a temporary copy of x: the "
                "receiving ranks' x keeps its own value", range=(2, 16, 2, 25)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.to(accelerator.device), 0)",
                expected_message="dist.broadcast() writes into x.to(accelerator.device), a temporary copy "
                "of x: the receiving ranks' x keeps its own value", range=(2, 16, 2, 40)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.detach().clone(), 0)",
                expected_message="dist.broadcast() writes into x.detach().clone(), a temporary copy of x: "
                "the receiving ranks' x keeps its own value", range=(2, 16, 2, 34)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x + 1, 0)",
                expected_message="dist.broadcast() writes into x + 1, a new tensor nobody keeps, so the "
                "received value is lost", range=(2, 16, 2, 21)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(tensor=x[:, ::2], src=0)",
                expected_message="dist.broadcast() writes into x[:, ::2], a non-contiguous view: gloo "
                "writes the received elements as one contiguous block and silently corrupts x, NCCL "
                "raises 'Tensors must be contiguous'", range=(2, 23, 2, 32)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x[:, 1:], 0)",
                expected_message="dist.broadcast() writes into x[:, 1:], a non-contiguous view: gloo "
                "writes the received elements as one contiguous block and silently corrupts x, NCCL "
                "raises 'Tensors must be contiguous'", range=(2, 16, 2, 24)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x[::2], 0)",
                expected_message="dist.broadcast() writes into x[::2], a non-contiguous view: gloo writes "
                "the received elements as one contiguous block and silently corrupts x, NCCL raises "
                "'Tensors must be contiguous'", range=(2, 16, 2, 22)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x[:, 0], 0)",
                expected_message="dist.broadcast() writes into x[:, 0], a non-contiguous view: gloo "
                "writes the received elements as one contiguous block and silently corrupts x, NCCL "
                "raises 'Tensors must be contiguous'", range=(2, 16, 2, 23)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.t(), 0)",
                expected_message="dist.broadcast() writes into x.t(), a transposed (non-contiguous) view "
                "of x: NCCL raises 'Tensors must be contiguous'", range=(2, 16, 2, 21)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.T, 0)",
                expected_message="dist.broadcast() writes into x.T, a transposed (non-contiguous) view of "
                "x: NCCL raises 'Tensors must be contiguous'", range=(2, 16, 2, 19)),
        Invalid("x = torch.zeros(8, 4, 2)\ndist.broadcast(x.transpose(0, 1), 0)",
                expected_message="dist.broadcast() writes into x.transpose(0, 1), a transposed "
                "(non-contiguous) view of x: NCCL raises 'Tensors must be contiguous'",
                range=(2, 16, 2, 33)),
        Invalid("x = torch.zeros(8, 4, 2)\ndist.broadcast(x.permute(2, 0, 1), 0)",
                expected_message="dist.broadcast() writes into x.permute(2, 0, 1), a transposed "
                "(non-contiguous) view of x: NCCL raises 'Tensors must be contiguous'",
                range=(2, 16, 2, 34)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x[:, ::2].contiguous(), 0)",
                expected_message="dist.broadcast() writes into x[:, ::2].contiguous(), a temporary copy "
                "of x: the receiving ranks' x keeps its own value", range=(2, 16, 2, 38)),
        # A channels_last model's 4-D weights are not contiguous: .contiguous() copies them.
        Invalid("def sync(model):\n    model = model.to(memory_format=torch.channels_last)\n"
                "    for p in model.parameters():\n        dist.broadcast(p.data.contiguous(), src=0)",
                expected_message="dist.broadcast() writes into p.data.contiguous(), a temporary copy of p: the "
                "receiving ranks' p keeps its own value", range=(4, 24, 4, 43)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x.narrow(1, 0, 2), 0)",
                expected_message="dist.broadcast() writes into x.narrow(1, 0, 2), a non-contiguous view: "
                "gloo writes the received elements as one contiguous block and silently corrupts x, NCCL "
                "raises 'Tensors must be contiguous'", range=(2, 16, 2, 33)),
        Invalid("x = torch.zeros(8, 4)\nbroadcast(x.float())",
                expected_message="broadcast() writes into x.float(), a temporary whose received value is "
                "discarded", range=(2, 11, 2, 20)),
        Invalid("x = torch.zeros(8, 4)\nbroadcast([x.cpu(), x])",
                expected_message="broadcast() writes into x.cpu(), a temporary whose received value is "
                "discarded", range=(2, 12, 2, 19)),
        Invalid("x = torch.zeros(8, 4)\ncolumns = broadcast(x[:, ::2])",
                expected_message="broadcast() writes into x[:, ::2], a non-contiguous view: gloo writes "
                "the received elements as one contiguous block and silently corrupts x, NCCL raises "
                "'Tensors must be contiguous'", range=(2, 21, 2, 30)),
        Invalid("x = torch.zeros(8, 4)\ndist.broadcast(x[[0, 2]], 0)",
                expected_message="dist.broadcast() writes into x[[0, 2]], a temporary copy of x: the "
                "receiving ranks' x keeps its own value", range=(2, 16, 2, 25)),
        Invalid("x = torch.zeros(8, 4)\ncol = x[:, 0]\ndist.broadcast(col, 0)",
                expected_message="dist.broadcast() writes into 'col', a non-contiguous view: gloo writes "
                "the received elements as one contiguous block and silently corrupts the tensor it views, "
                "NCCL raises 'Tensors must be contiguous'", range=(3, 16, 3, 19)),
        Invalid("x = torch.zeros(8, 4)\nwork = dist.broadcast(x.cuda(), 0, async_op=True)\nwork.wait()",
                expected_message="dist.broadcast() writes into x.cuda(), a temporary copy of x: the "
                "receiving ranks' x keeps its own value", range=(2, 23, 2, 31)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        yield from _repeated_buckets(analysis)
        yield from _reductions_lost(analysis)
        yield from _object_lists_dropped(analysis)
        for site in analysis.broadcasts():
            if not site.api.in_place or site.api.payload != apis.TENSOR or site.payload is None:
                continue
            discarded = _result_discarded(site)
            for expr in payload_leaves(site.payload, site.api.nested):
                kind = _kind(analysis, expr)
                if kind == COPY and discarded or kind in (STRIDED, PERMUTED):
                    message, remedy = _message(analysis, site, expr, kind)
                    yield Report(expr, message, help=remedy)
                elif kind is None and isinstance(expr, cst.Name):
                    kind = _named_view_kind(analysis, site, expr)
                    if kind is not None:
                        message, remedy = _named_view_message(analysis, site, expr, kind)
                        yield Report(expr, message, help=remedy)
                    elif discarded:
                        yield from _item_of_a_fresh_container(analysis, site, expr)


# torch.distributed's collectives that receive into a list of tensors, one per rank: the list's
# parameter name and position.
_BUCKET_LISTS = {"all_gather": ("tensor_list", 0), "all_to_all": ("output_tensor_list", 0),
                 "gather": ("gather_list", 1)}


def _repeated_buckets(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`dist.all_gather([torch.zeros_like(t)] * world, t)`: one tensor listed once per rank, so
    every rank's value lands in the same memory and the last one written is all that is left."""
    for site in analysis.calls:
        name, position = _BUCKET_LISTS.get(site.api.short_name, (None, None))
        if name is None or not site.api.qualified_name.startswith("torch.distributed."):
            continue
        buckets = argument_value(site.call, position, name)
        if buckets is None:
            continue
        repeated = [value for value in analysis.reaching_values(site, buckets) if _repeated_list(value)]
        if repeated:
            listed = analysis.code(repeated[0])
            named = "" if repeated[0] is buckets else f" '{analysis.code(buckets)}',"
            yield Report(buckets, f"{site.api.short_name}() receives into{named} one tensor listed once per rank "
                         f"('{listed}'): every rank's value is written into the same memory, so each rank ends "
                         f"with the last one in every place, with no error",
                         help="Make one tensor per rank: [torch.zeros_like(t) for _ in range(world_size)]")


# torch.distributed's reductions write the result into the tensor they are given.
_IN_PLACE_REDUCTIONS = frozenset({"all_reduce", "reduce"})
# accelerate's that read like torch's in-place ones but return the result and leave their argument
# as it was (accelerate 1.15.0, utils/operations.py:865: `_reduce_across_processes` reduces
# `tensor.clone()`; pad_across_processes makes new tensors). A bare gather is left alone: its
# result has another shape, and no one mistakes it for an in-place call.
_RETURNING = frozenset({"reduce", "pad_across_processes"})
# Lightning's broadcasts send `[obj]`, a new list, and return its item: the argument stays as it
# was on every rank, tensors too (lightning 2.6.6, fabric/strategies/ddp.py:181, pytorch/strategies/ddp.py:311).
_RETURNING_BROADCASTS = frozenset({"lightning.fabric.fabric.Fabric.broadcast",
                                   "lightning.fabric.strategies.strategy.Strategy.broadcast",
                                   "lightning.pytorch.strategies.strategy.Strategy.broadcast"})


def _reductions_lost(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`dist.all_reduce(correct.float())`: the sum lands in a copy nobody keeps; a bare
    `accelerator.reduce(stats)`: the sum is returned and thrown away. Either way every rank goes
    on with its own value, with no error (pytorch#102435, accelerate#513)."""
    for site in analysis.calls:
        if not isinstance(site.call, cst.Call):  # a property read
            continue
        name, qualified = site.api.short_name, site.api.qualified_name
        if qualified.startswith("torch.distributed.") and name in _IN_PLACE_REDUCTIONS and site.call.args:
            reduced = site.call.args[0].value
            # (a new tensor reduced for nothing, `all_reduce(torch.ones(1))`, is a way to synchronise)
            base = _base_name(analysis, reduced) if _kind(analysis, reduced) == COPY else None
            if base is not None and not _conversion_may_be_a_no_op(analysis, site, reduced):
                yield Report(reduced, f"{name}() writes the result into {analysis.code(reduced)}, a temporary "
                             f"copy that nobody keeps: {base} keeps this rank's own value, with no error",
                             help=f"Reduce {base} itself, or keep the copy in a name and read it after the call")
        elif qualified.startswith(("accelerate.", "Accelerator.")) and name in _RETURNING:
            yield from _result_thrown_away(analysis, site, f"returns the result and leaves {{}} as it was (accelerate "
                                           f"{_ACCELERATE}, utils/operations.py:865 reduces a clone)")
        elif qualified in _RETURNING_BROADCASTS:
            yield from _result_thrown_away(analysis, site, f"returns what the source rank sent and leaves {{}} as it "
                                           f"was (lightning {_LIGHTNING}, fabric/strategies/ddp.py:181 sends a new list)")


def _object_lists_dropped(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`dist.broadcast_object_list([cfg], src=0)`: the objects land in a list made for the call,
    which nobody can read after it (torch's returns None; accelerate's returns the list, which a
    bare call throws away), so `cfg` stays each rank's own. Only where every rank makes the call
    (the source's arm of a rank test may send a literal while the others receive into a name), and
    what is listed differs between ranks (a draw seeded alike everywhere needs no broadcast)."""
    for site in analysis.broadcasts():
        if site.api.short_name != "broadcast_object_list" or not isinstance(site.payload, cst.List) \
                or not _result_discarded(site) or not site.payload.elements:
            continue
        if set(site.reached) != set(analysis.worlds.get(site.scope, ())):
            continue  # sent from the source's arm of a rank test: the others receive into a list of theirs
        reasons = [analysis.divergence.value_at(site.call, element.value) for element in site.payload.elements]
        reason = next(filter(None, reasons), None)
        if reason is None:
            continue  # what every rank lists alike (a draw seeded alike): the dropped copy changes nothing
        listed = ", ".join(f"'{analysis.code(element.value)}'" for element in site.payload.elements[:2])
        yield Report(site.payload, f"{site.api.short_name}() receives into '{analysis.code(site.payload)}', a list made "
                     f"for the call that nobody reads after it: the receiving ranks drop what the source sent and "
                     f"keep their own {listed}, which differ between ranks ({reason}), with no error",
                     help="Name the list, broadcast it, and read the objects back from it on every rank")


def _result_thrown_away(analysis: ModuleAnalysis, site: CallSite, returns: str) -> Iterator[Report]:
    """A bare call of a collective that returns its result and leaves its argument alone."""
    if not is_bare_call(site.statement, site.call) or _expected_to_raise(analysis, site):
        return
    argument = site.call.args[0].value if site.call.args else None
    shown = f"'{analysis.code(argument)}'" if argument is not None else "its argument"
    yield Report(site.call, f"{analysis.code(site.call.func)}() {returns.format(shown)}: the bare call throws "
                 f"the result away, and every rank goes on with its own value",
                 help=f"Use its result: {analysis.code(argument)} = {analysis.code(site.call)}"
                 if argument is not None else "Use its result")


# Context managers of tests that expect the code inside to raise.
_EXPECTING_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assert_exception"})


def _expected_to_raise(analysis: ModuleAnalysis, site: CallSite) -> bool:
    """`with pytest.raises(...): reduce(data)`: a test that the call fails, whose result is no value."""
    return any(isinstance(node, cst.With) and any(isinstance(item.item, cst.Call) and last_name(item.item.func)
                                                  in _EXPECTING_RAISES for item in node.items)
               for node in analysis.ancestors(site))


# Conversions that return the tensor itself when it already has the dtype (canonical names).
_CONVERSIONS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                "long": "int64", "int": "int32", "bool": "bool"}


def _conversion_may_be_a_no_op(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression) -> bool:
    """`counts.float()` where no value of `counts` known to reach the call has another dtype: for a
    float32 `counts` it returns `counts` itself, and the reduction lands in it."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args
            and expr.func.attr.value in _CONVERSIONS and isinstance(expr.func.value, cst.Name)):
        return False
    names = lambda node: analysis.qualified_names(node, site.scope)  # noqa: E731
    specs = [tensor_spec(value, names) for value in analysis.reaching_values(site, expr.func.value)]
    return not any(spec is not None and spec.dtype not in (None, _CONVERSIONS[expr.func.attr.value])
                   for spec in specs)


def _repeated_list(value: cst.BaseExpression) -> bool:
    """`[t] * n` or `n * [torch.zeros_like(t)]`: a one-item list of a tensor, repeated."""
    if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Multiply):
        return False
    return any(isinstance(side, cst.List) and len(side.elements) == 1
               and isinstance(side.elements[0].value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
               and not is_none(side.elements[0].value) for side in (value.left, value.right))


def _result_discarded(site: CallSite) -> bool:
    """Whether the argument is the only place the value lands: torch's broadcast returns None;
    accelerate's returns the filled tensors, which a bare call throws away."""
    return site.api.returns_none or is_bare_call(site.statement, site.call)


# -- what an expression is -------------------------------------------------------------------
def _kind(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> Optional[str]:
    """COPY, STRIDED or PERMUTED; None for a name, a contiguous view, or anything unknown."""
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)) and not isinstance(
            getattr(expr, "operator", None), cst.Not):
        return COPY
    if isinstance(expr, cst.Subscript):
        return _subscript_kind(analysis, expr)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in _PERMUTING_ATTRIBUTES:
            return _permuted(_kind(analysis, expr.value))
        return _kind(analysis, expr.value) if expr.attr.value == "data" else None
    if isinstance(expr, cst.Call):
        return _call_kind(analysis, expr)
    return None


def _permuted(base: Optional[str]) -> str:
    return base if base in (COPY, STRIDED) else PERMUTED


def _call_kind(analysis: ModuleAnalysis, call: cst.Call) -> Optional[str]:
    qualified = analysis.qualified_names(call)
    if argument_value(call, keyword="out") is not None:
        return None  # returns `out`, an existing tensor
    if qualified & _NEW_TENSOR_FUNCTIONS or any(_new_from_torch(name, call) for name in qualified):
        return COPY
    if qualified & _PERMUTING_FUNCTIONS:
        arguments = positional_arguments(call)
        return _permuted(_kind(analysis, arguments[0]) if arguments else None)
    if not _is_tensor_method(analysis, call):
        return None
    method = method_name(call)
    base = _kind(analysis, call.func.value)
    if method in _COPYING_METHODS:
        return COPY
    if method in _PERMUTING_METHODS:
        return base if _is_identity_permutation(call) else _permuted(base)
    if method in _LAYOUT_KEEPING_METHODS or method.endswith("_"):
        return base  # in-place methods return the tensor itself
    if method in _RESHAPING_METHODS:
        return COPY if base is not None or _channels_last_parameter(analysis, call.func.value) else None
    if method in _DIMENSION_METHODS:
        return _dimension_view(call, base)
    if method == "diagonal":
        return base if base == COPY else STRIDED
    return None


_PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})


def _channels_last_parameter(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """`p` or `p.data` for `for p in model.parameters()`, in a module that moves models to
    `memory_format=torch.channels_last`: a 4-D weight is then not contiguous, and `.contiguous()`
    or `.reshape()` of it is a copy (a Linear's weight stays contiguous: the copy is per tensor)."""
    while isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        expr = expr.value
    if not isinstance(expr, cst.Name) or "channels_last" not in analysis.whole_text():
        return False
    for loop in every_node(analysis.module, cst.For):
        call = loop.iter
        if isinstance(call, cst.Call) and last_name(call.func) in _PARAMETER_ITERATORS \
                and expr.value in target_names(loop.target):
            return True
    return False


def _new_from_torch(qualified: str, call: cst.Call) -> bool:
    """`torch.abs(x)`, `F.normalize(x)`, `parameters_to_vector(...)`: a torch function that
    returns a new tensor. Not an in-place one (`torch.relu_`, `inplace=True`), which returns its
    argument, nor one that shares memory with it or returns no tensor."""
    if qualified in _NEW_TENSOR_ELSEWHERE:
        return True
    module, _, name = qualified.rpartition(".")
    if module not in _TORCH_NAMESPACES or not name[:1].islower() or name.endswith("_"):
        return False
    inplace = argument_value(call, keyword="inplace")
    if inplace is not None and not (isinstance(inplace, cst.Name) and inplace.value == "False"):
        return False
    return name not in _SHARING_TORCH_FUNCTIONS and name not in _NOT_TENSOR_TORCH_FUNCTIONS


def _is_tensor_method(analysis: ModuleAnalysis, call: cst.Call) -> bool:
    """`x.clone()` rather than `torch.cat(...)` or `F.pad(...)`: the receiver is not a module."""
    if not isinstance(call.func, cst.Attribute):
        return False
    receiver = call.func.value
    if not isinstance(receiver, (cst.Name, cst.Attribute)):
        return True
    return not any(q == "torch" or q.startswith("torch.") for q in analysis.qualified_names(receiver))


def _is_identity_permutation(call: cst.Call) -> bool:
    """`x.permute(0, 1, 2)` or `x.transpose(1, 1)`: no change of layout."""
    values = [integer_literal(arg) for arg in positional_arguments(call)]
    if not values or None in values:
        return False
    if method_name(call) == "permute":
        return values == list(range(len(values)))
    return len(set(values)) == 1


def _dimension_view(call: cst.Call, base: Optional[str]) -> Optional[str]:
    arguments = positional_arguments(call)
    dimension = integer_literal(arguments[0]) if arguments else None
    if base == COPY or (base is not None and dimension == 0):
        return base
    if dimension is None or (dimension == 0 and base is None):
        return None
    return STRIDED


def _subscript_kind(analysis: ModuleAnalysis, subscript: cst.Subscript) -> Optional[str]:
    base = _kind(analysis, subscript.value)
    own = _indexing_kind(analysis, subscript.slice)
    if base == COPY or own == COPY:
        return COPY
    if base == STRIDED or own == STRIDED:
        return STRIDED
    if base == PERMUTED:
        return PERMUTED if all(_is_full_slice(e.slice) for e in subscript.slice) else STRIDED
    return None


def _indexing_kind(analysis: ModuleAnalysis, elements) -> Optional[str]:
    """What `x[elements]` is for a contiguous `x`: integers first, then at most one slice on the
    next dimension, then only full slices keep it contiguous. An index after `...` is not judged:
    how many dimensions `...` stands for is unknown."""
    sliced = False
    for element in elements:
        index = element.slice
        if isinstance(index, cst.Slice):
            if index.step is not None and integer_literal(index.step) != 1:
                return STRIDED
            if sliced and not _is_full_slice(index):
                return STRIDED
            sliced = True
            continue
        value = index.value
        if isinstance(value, cst.Ellipsis):
            return None
        if is_none(value):
            continue
        if _is_advanced_index(analysis, value):
            return COPY
        if sliced:
            return STRIDED
    return None


def _is_full_slice(index) -> bool:
    if not isinstance(index, cst.Slice):
        return isinstance(index, cst.Index) and is_none(index.value)
    step_is_one = index.step is None or integer_literal(index.step) == 1
    return index.lower is None and index.upper is None and step_is_one


def _is_advanced_index(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    """A list, a mask or a tensor of indices: indexing with it gathers into a new tensor."""
    if isinstance(value, (cst.List, cst.ListComp, cst.Comparison)):
        return True
    return isinstance(value, cst.Call) and bool(analysis.qualified_names(value) & _NEW_TENSOR_FUNCTIONS)


def _named_view_kind(analysis: ModuleAnalysis, site: CallSite, name: cst.Name) -> Optional[str]:
    """STRIDED or PERMUTED when every assignment of `name` reaching the call makes such a view.
    A copy held in a name is fine: the name is there to read the received value from."""
    kinds = set()
    for world, definitions in analysis.definitions(site, name.value).items():
        for definition in definitions:
            if definition.kind != ASSIGNED:
                return None
            kinds.update(_kind(analysis, value) for value in analysis.values(definition, world))
    return kinds.pop() if len(kinds) == 1 and kinds & {STRIDED, PERMUTED} else None


def _item_of_a_fresh_container(analysis: ModuleAnalysis, site: CallSite, name: cst.Name) -> Iterator[Report]:
    """`for value in scaler.state_dict().values(): dist.broadcast(value, 0)` where the module's
    own `state_dict` builds its tensors anew (`torch.tensor(self.mean)`) and the loop reads
    `value` no more: what is received lands in tensors nobody keeps (rsl_rl#233). nn.Module's
    `state_dict()` hands out the parameters' own storage; it is not the module's own method."""
    loop = next((node for node in reversed(analysis.ancestors(site)) if isinstance(node, cst.For)), None)
    if loop is None or not isinstance(loop.target, cst.Name) or loop.target.value != name.value:
        return
    made = _iterated_call(loop.iter)
    if made is None or not isinstance(made.func, cst.Attribute) or _read_after(loop, site, name.value):
        return
    klass = analysis.local_class_of(made.func.value, site.scope)
    method = next((member for member in klass.body.body if isinstance(member, cst.FunctionDef)
                   and member.name.value == made.func.attr.value), None) if klass is not None else None
    items = _returned_items(method) if method is not None else None
    if items and all(_kind(analysis, item) == COPY for item in items):
        yield Report(name, f"{analysis.code(site.call.func)}() writes into '{name.value}', an item of what "
                     f"'{analysis.code(made)}' builds anew on each call ('{analysis.code(items[0])}'): nothing "
                     "reads it afterwards, so the receiving ranks keep their own values",
                     help="Load what was received back (e.g. into a dict passed to load_state_dict), or broadcast "
                     "the tensors the object keeps")


def _iterated_call(iterable: cst.BaseExpression) -> Optional[cst.Call]:
    """`obj.state_dict()` in `obj.state_dict().values()` or `obj.tensors()`."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value == "values" and isinstance(iterable.func.value, cst.Call):
        return iterable.func.value
    return iterable if isinstance(iterable, cst.Call) else None


def _read_after(loop: cst.For, site: CallSite, name: str) -> bool:
    """Whether the loop's body reads `name` anywhere but in the broadcast itself."""
    return any(node.value == name for node in every_node(loop.body, cst.Name)
               if not any(node is argument.value for argument in site.call.args))


def _returned_items(method: cst.FunctionDef) -> Optional[list[cst.BaseExpression]]:
    """The values of the dict or list literals every `return` of `method` hands back, or None."""
    items: list[cst.BaseExpression] = []
    for returned in every_node(method.body, cst.Return):
        value = returned.value
        if isinstance(value, cst.Dict) and all(isinstance(e, cst.DictElement) for e in value.elements):
            items += [element.value for element in value.elements]
        elif isinstance(value, (cst.List, cst.Tuple)) and all(isinstance(e, cst.Element) for e in value.elements):
            items += [element.value for element in value.elements]
        else:
            return None
    return items or None


# -- messages --------------------------------------------------------------------------------
# Each returns what is wrong, and the remedy.
def _message(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression,
             kind: str) -> tuple[str, str]:
    called = f"{analysis.code(site.call.func)}()"
    shown = analysis.code(expr)
    base = _base_name(analysis, expr)
    if kind != COPY:
        return _view_message(called, shown, base or shown, kind)
    if not site.api.returns_none:  # accelerate's broadcast returns what it received
        result = f"{base} = {analysis.code(site.call)}" if base and expr is site.payload else None
        use = f"Use its result ({result})" if result else "Use its result"
        remedy = f"{use} or broadcast {base} itself" if base else use
        return f"{called} writes into {shown}, a temporary whose received value is discarded", remedy
    if base is None:
        return (f"{called} writes into {shown}, a new tensor nobody keeps, so the received value "
                "is lost", "Assign it to a name, broadcast that name and read the value from it")
    return (f"{called} writes into {shown}, a temporary copy of {base}: the receiving ranks' {base} "
            "keeps its own value",
            f"Broadcast {base} itself (then convert), or keep the copy in a name and read it after the call")


def _named_view_message(analysis: ModuleAnalysis, site: CallSite, name: cst.Name,
                        kind: str) -> tuple[str, str]:
    called = f"{analysis.code(site.call.func)}()"
    return _view_message(called, f"'{name.value}'", "the tensor it views", kind)


def _view_message(called: str, shown: str, base: str, kind: str) -> tuple[str, str]:
    if kind == STRIDED:
        return (f"{called} writes into {shown}, a non-contiguous view: gloo writes the received "
                f"elements as one contiguous block and silently corrupts {base}, NCCL raises "
                "'Tensors must be contiguous'", "Broadcast a .contiguous() copy and copy it back")
    return (f"{called} writes into {shown}, a transposed (non-contiguous) view of {base}: NCCL "
            "raises 'Tensors must be contiguous'", f"Broadcast {base} itself")


def _base_name(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> Optional[str]:
    """`x` for `x.detach().clone()`, `x[:, ::2]` or `x.T`; None for a new tensor."""
    while True:
        if isinstance(expr, cst.Call) and _is_tensor_method(analysis, expr):
            expr = expr.func.value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value in _PERMUTING_ATTRIBUTES | {"data"}:
            expr = expr.value
        else:
            break
    return analysis.code(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None

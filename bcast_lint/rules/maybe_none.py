from __future__ import annotations

from typing import Iterator

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.expressions import has_none_leaf, is_none
from bcast_lint.analysis.flow import ASSIGNED
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.fixes.placeholder import placeholder_or_object_list_fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid


class BroadcastArgMaybeNone(Rule):
    """
    ## What it does
    Flags a broadcast whose argument is `None` on some ranks: the value is computed under a
    rank condition (`if accelerator.is_main_process:`) and left at `None` everywhere else. A
    placeholder allocated under `if x is None:` before the broadcast replaces the `None` on the
    ranks that still held it, so that code is not reported.

    Attributes are followed as BCL002 describes: `self.x = None` in `__init__`, set only when
    `self.rank == 0` in `setup()`, and broadcast in a third method is reported; so is `obj.x`
    of a local object.

    The project's own functions are followed too, across modules: a value passed to a wrapper
    that broadcasts its parameter (`def _broadcast(item): dist.broadcast(item, 0)`) is checked at
    the call, and the result of a helper that returns `None` off the main rank
    (`if not state.is_main_process: return None`) counts as `None` on those ranks.

    ## Why is this bad?
    Only the source rank's value matters, but every rank must pass a tensor of the same shape and
    dtype to receive it into. Accelerate's `broadcast` raises on the receiving ranks
    ``TypeError: Unsupported types (<class 'NoneType'>) passed to `_gpu_broadcast_one` ``, and
    `torch.distributed.broadcast` raises ``TypeError: Invalid function argument. Expected parameter
    `tensor` of type torch.Tensor but got <class 'NoneType'> instead.``; the source rank then fails
    with `Connection closed by peer` (gloo) or hangs. In a single process accelerate returns the
    `None` untouched, so single-process tests never see it.

    ## Example
    ```python
    ids = None
    if accelerator.is_main_process:
        ids = torch.randperm(n, device=accelerator.device)
    ids = broadcast(ids)
    ```

    ## Use instead
    ```python
    ids = torch.zeros(n, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_main_process:
        ids = torch.randperm(n, device=accelerator.device)
    ids = broadcast(ids)
    ```
    For values that are not tensors, use `broadcast_object_list([value])`.

    ## Fix safety
    When the source value comes from a constructor whose shape, dtype and device can be read off
    the code, the fix allocates a zero placeholder on every rank before the branch; that is safe
    when dtype and device are known, unsafe otherwise (the fix guesses them). Otherwise the fix
    rewrites the call into the object-list form, which changes the transport: unsafe.

    ## References
    - [accelerate.utils.broadcast](https://huggingface.co/docs/accelerate/package_reference/utilities#accelerate.utils.broadcast)
    - [torch.distributed.broadcast](https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast)
    """

    code = "BCL001"
    VALID = (
        # Filled by unpacking on every rank: the main process's values, placeholders elsewhere.
        Valid("class Table:\n    def __init__(self, accelerator):\n        self.accelerator = accelerator\n"
              "        self.x = None\n        self.y = None\n    def fetch(self):\n"
              "        if self.accelerator.is_main_process:\n            self.x, self.y = load()\n"
              "        else:\n            self.x, self.y = torch.zeros(4), torch.zeros(4)\n"
              "        self.x = broadcast(self.x)"),
        # A helper that returns None whatever the rank is not rank-dependent.
        # A helper that returns None for an argument, not for a rank, broadcast as called.
        Valid("def draw(n):\n    if n == 0:\n        return None\n    return torch.randperm(n)\nids = broadcast(draw(10))"),
        Valid("def load(path):\n    if not path:\n        return None\n    return torch.ones(3)\n"
              "x = load('w.pt')\ndist.broadcast(x, 0)"),
        # `obj` is rebound: what was known of `obj.x` no longer holds.
        Valid("obj = make()\nobj.x = None\nif accelerator.is_main_process:\n    obj.x = torch.randn(3)\n"
              "obj = make()\nbroadcast(obj.x)"),
        Valid("ids = torch.zeros(8)\nif accelerator.is_main_process:\n    ids = torch.randn(8)\nbroadcast(ids)"),
        Valid("obj = [None]\nif accelerator.is_main_process:\n    obj = [load()]\nbroadcast_object_list(obj)"),
        Valid("ids = None\nif accelerator.num_processes > 1:\n    ids = torch.randn(8)\nbroadcast(ids)"),
        # Every rank that still holds None allocates the placeholder before the broadcast.
        Valid("ids = None\nif accelerator.is_main_process:\n    ids = torch.randn(8)\nif ids is None:\n"
              "    ids = torch.zeros(8)\nbroadcast(ids)"),
        Valid("ids = None\nif accelerator.is_main_process:\n    ids = torch.randn(8)\nif not ids is not None:\n"
              "    ids = torch.zeros(8)\nbroadcast(ids)"),
    )
    INVALID = (
        # The project's own wrapper of a broadcast, and a helper that returns None off main.
        Invalid("def _broadcast(item):\n    dist.broadcast(item, 0)\nids = None\nif accelerator.is_main_process:\n"
                "    ids = torch.randn(8)\n_broadcast(ids)",
                expected_message="'ids' is None on ranks where 'accelerator.is_main_process' is false when it "
                "reaches _broadcast()", range=(6, 1, 6, 16),
                expected_replacement="def _broadcast(item):\n    dist.broadcast(item, 0)\n"
                "ids = torch.zeros(8, dtype=torch.float32)\nif accelerator.is_main_process:\n"
                "    ids = torch.randn(8)\n_broadcast(ids)"),
        Invalid("def load(state):\n    if not state.is_main_process:\n        return None\n    return torch.ones(3)\n"
                "def sync(state):\n    w = load(state)\n    dist.broadcast(w, 0)",
                expected_message="'w' is None on the ranks where load() returns None when it reaches broadcast()",
                range=(7, 5, 7, 25),
                expected_replacement="def load(state):\n    if not state.is_main_process:\n        return None\n"
                "    return torch.ones(3)\ndef sync(state):\n    w = load(state)\n    w_objects = [w]\n"
                "    dist.broadcast_object_list(w_objects, 0)\n    w = w_objects[0]"),
        # Attributes filled together by unpacking, on the main process only.
        Invalid("class Table:\n    def __init__(self, accelerator):\n        self.accelerator = accelerator\n"
                "        self.x = None\n        self.y = None\n    def fetch(self):\n"
                "        if self.accelerator.is_main_process:\n            self.x, self.y = load()\n"
                "        self.x = broadcast(self.x)",
                expected_message="'self.x' is None on ranks where 'self.accelerator.is_main_process' is false when "
                "it reaches broadcast()", range=(9, 18, 9, 35)),
        # None in __init__, set on rank 0 only in setup(), broadcast in a third method.
        Invalid("class K:\n    def __init__(self):\n        self.rank = dist.get_rank()\n        self.x = None\n"
                "    def setup(self):\n        if self.rank == 0:\n            self.x = torch.randn(3)\n"
                "    def share(self):\n        dist.broadcast(self.x, 0)",
                expected_replacement="class K:\n    def __init__(self):\n        self.rank = dist.get_rank()\n"
                "        self.x = torch.zeros(3, dtype=torch.float32)\n"
                "    def setup(self):\n        if self.rank == 0:\n            self.x = torch.randn(3)\n"
                "    def share(self):\n        dist.broadcast(self.x, 0)",
                expected_message="'self.x' is None on ranks where 'self.rank == 0' is false when it reaches "
                "broadcast()",
                range=(9, 9, 9, 34)),
        Invalid("state = make_state()\nstate.best = None\nif accelerator.is_main_process:\n"
                "    state.best = torch.randn(1)\nbroadcast(state.best)",
                expected_replacement="state = make_state()\nstate.best = torch.zeros(1, dtype=torch.float32)\n"
                "if accelerator.is_main_process:\n    state.best = torch.randn(1)\nbroadcast(state.best)",
                expected_message="'state.best' is None on ranks where 'accelerator.is_main_process' is false when it "
                "reaches broadcast()",
                range=(5, 1, 5, 22)),
        Invalid("ids = None\nif accelerator.is_main_process:\n    ids = torch.randn(8)\nbroadcast(ids)",
                expected_message="'ids' is None on ranks where 'accelerator.is_main_process' is false "
                "when it reaches broadcast()", range=(4, 1, 4, 15),
                expected_replacement="ids = torch.zeros(8, dtype=torch.float32)\n"
                "if accelerator.is_main_process:\n    ids = torch.randn(8)\nbroadcast(ids)"),
        Invalid("ids = None\nif accelerator.is_main_process:\n    ids = load_ids()\nids = broadcast(ids)",
                expected_message="'ids' is None on ranks where 'accelerator.is_main_process' is false "
                "when it reaches broadcast()", range=(4, 7, 4, 21),
                expected_replacement="ids = None\nif accelerator.is_main_process:\n    ids = load_ids()\n"
                "ids = broadcast_object_list([ids])[0]"),
        Invalid("if accelerator.is_main_process:\n    x = torch.randn(4)\nelse:\n    x = None\nbroadcast(x)",
                expected_message="'x' is None on ranks where 'accelerator.is_main_process' is false when "
                "it reaches broadcast()", range=(5, 1, 5, 13),
                expected_replacement="if accelerator.is_main_process:\n    x = torch.randn(4)\nelse:\n"
                "    x = torch.zeros(4, dtype=torch.float32)\nbroadcast(x)"),
        # The None test only scales the value; the None path still reaches the broadcast.
        Invalid("ids = None\nif accelerator.is_main_process:\n    ids = torch.randn(8)\nif ids is not None:\n"
                "    ids = ids * 2\nbroadcast(ids)",
                expected_message="'ids' is None on ranks where 'accelerator.is_main_process' is false "
                "when it reaches broadcast()", range=(6, 1, 6, 15),
                expected_replacement="ids = torch.zeros(8, dtype=torch.float32)\nif accelerator.is_main_process:\n"
                "    ids = torch.randn(8)\nif ids is not None:\n    ids = ids * 2\nbroadcast(ids)"),
        # On the group's other members: a group rank is not the global rank.
        Invalid("def f(g):\n    ids = None\n    if dist.get_rank(group=g) == 0:\n        ids = torch.randn(8)\n"
                "    dist.broadcast(ids, dist.get_global_rank(g, 0), group=g)",
                expected_message="'ids' is None on ranks where 'dist.get_rank(group=g) == 0' is false "
                "when it reaches broadcast()", range=(5, 5, 5, 61),
                expected_replacement="def f(g):\n    ids = torch.zeros(8, dtype=torch.float32)\n"
                "    if dist.get_rank(group=g) == 0:\n        ids = torch.randn(8)\n"
                "    dist.broadcast(ids, dist.get_global_rank(g, 0), group=g)"),
        Invalid("ids = torch.randn(8) if accelerator.is_main_process else None\nbroadcast(ids)",
                expected_message="'ids' is None on ranks where 'accelerator.is_main_process' is false "
                "when it reaches broadcast()", range=(2, 1, 2, 15),
                expected_replacement="ids = torch.randn(8) if accelerator.is_main_process else None\n"
                "ids = broadcast_object_list([ids])[0]"),
        # A method of the module's class that returns None off the main process, broadcast as called.
        Invalid("class Sampler:\n    def draw(self):\n        if not accelerator.is_main_process:\n"
                "            return None\n        return torch.randperm(10)\nsampler = Sampler()\n"
                "ids = broadcast(sampler.draw())",
                expected_message="'sampler.draw()' is None on the ranks where sampler.draw() returns None when it "
                "reaches broadcast()", range=(7, 7, 7, 32)),
        # No fix: the source value's shape is unknown and the call is not a statement of its own.
        Invalid("ids = None\nif accelerator.is_main_process:\n    ids = load_ids()\nprint(broadcast(ids))",
                expected_message="'ids' is None on ranks where 'accelerator.is_main_process' is false "
                "when it reaches broadcast()", range=(4, 7, 4, 21)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        for site in analysis.broadcasts():
            if self._helper_returns_none(analysis, site):
                helper = f"{analysis.code(site.payload.func)}()"
                message = f"'{analysis.code(site.payload)}' is None on the ranks where {helper} returns None " \
                          f"when it reaches {site.api.short_name}()"
                yield Report(site.call, message, None, self._help(site))
            for name in analysis.payload_names(site):
                split = analysis.split_ranks(site, name.value, self._none_test(analysis, site))
                if split is not None:
                    fix = placeholder_or_object_list_fix(analysis, site, name.value, split)
                    yield Report(site.call, self._message(site, name.value, _where(analysis, split)), fix,
                                 self._help(site))

    @staticmethod
    def _helper_returns_none(analysis: ModuleAnalysis, site: CallSite) -> bool:
        """`broadcast(sampler.draw())` where the project's `draw` returns None off the main
        process: the payload is the call itself, on some of the ranks that reach it."""
        payload = site.payload
        if not isinstance(payload, cst.Call) or site.api.payload != apis.TENSOR:
            return False
        return any(analysis.returns_none_on(payload, world) for world in site.reached)

    @staticmethod
    def _none_test(analysis: ModuleAnalysis, site: CallSite):
        # The object-list idiom `obj = [None]` is correct: only the list itself must not be None.
        is_broken = has_none_leaf if site.api.payload == apis.TENSOR else is_none

        def test(definition, world) -> bool:
            return definition.kind == ASSIGNED and any(
                is_broken(value) or analysis.returns_none_on(value, world)
                for value in analysis.values(definition, world))

        return test

    @staticmethod
    def _message(site: CallSite, name: str, where: str) -> str:
        return f"'{name}' is None on {where} when it reaches {site.api.short_name}()"

    @staticmethod
    def _help(site: CallSite) -> str:
        if site.api.payload == apis.TENSOR:
            return "Allocate a placeholder with the same shape, dtype and device on every rank"
        return "Pass a list on every rank, e.g. [None]"



def _where(analysis: ModuleAnalysis, split) -> str:
    """"ranks where 'accelerator.is_main_process' is false", or the helper that returns None."""
    if split.where.startswith("where"):
        return f"ranks {split.where}"
    helper = next((d.value for d in split.broken_definitions if isinstance(d.value, cst.Call)), None)
    if helper is not None:
        return f"the ranks where {analysis.code(helper.func)}() returns None"
    return split.where.removeprefix("on ")  # "some ranks"

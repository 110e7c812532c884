from __future__ import annotations

from typing import Iterator

from bcast_lint.analysis.flow import UNBOUND
from bcast_lint.analysis.module import AttributeName, ModuleAnalysis
from bcast_lint.fixes.placeholder import placeholder_or_object_list_fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

_HELP = "Assign a placeholder with the same shape, dtype and device on every rank"


class BroadcastArgUnbound(Rule):
    """
    ## What it does
    Flags a broadcast whose argument is assigned only inside a rank-conditional branch, so it is
    not bound at all on the other ranks.

    An attribute of the object a method runs on is followed across the class's methods: one
    assigned only under a rank condition in `__init__` or a setup method (`setup*`, `init*`,
    `build*`, `prepare*`, `load*`, `configure*`, `on_*start`), which are taken to run first, and
    broadcast in another method (`self.weights` set under `if accelerator.is_main_process:` in
    `__init__`, sent in `sync()`). When any other method assigns it too, or the class's
    `__init__` calls `super()` or is inherited, it is not taken to be unbound at the start.

    ## Why is this bad?
    The ranks that skipped the branch raise `NameError` (module level), `UnboundLocalError`
    (in a function) or `AttributeError` (an attribute never set there) at the broadcast, and the source rank then fails with
    `Connection closed by peer` (gloo) or waits in the collective until the backend timeout.

    ## Example
    ```python
    if accelerator.is_main_process:
        seed = torch.randint(0, 2**31, (1,), device=accelerator.device)
    seed = broadcast(seed)
    ```

    ## Use instead
    ```python
    seed = torch.zeros(1, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_main_process:
        seed = torch.randint(0, 2**31, (1,), device=accelerator.device)
    seed = broadcast(seed)
    ```

    ## Fix safety
    As for BCL001: a zero placeholder on every rank before the branch when the source value's
    constructor shows its shape, dtype and device (safe when dtype and device are known), else
    the object-list form (unsafe).
    """

    code = "BCL002"
    VALID = (
        # Another method assigns the attribute too: nothing is known of it when sync() runs.
        Valid("class K:\n    def __init__(self):\n        if accelerator.is_main_process:\n"
              "            self.w = torch.randn(3)\n    def reset(self):\n        self.w = torch.zeros(3)\n"
              "    def sync(self):\n        broadcast(self.w)"),
        Valid("class K:\n    def __init__(self):\n        self.w = torch.zeros(3)\n"
              "        if accelerator.is_main_process:\n            self.w = torch.randn(3)\n"
              "    def sync(self):\n        broadcast(self.w)"),
        # A base class's __init__ runs first and may assign it on every rank.
        Valid("class K(Base):\n    def __init__(self):\n        super().__init__()\n"
              "        if accelerator.is_main_process:\n            self.w = torch.randn(3)\n"
              "    def sync(self):\n        broadcast(self.w)"),
        Valid("class K(Base):\n    def setup(self):\n        if accelerator.is_main_process:\n"
              "            self.w = torch.randn(3)\n    def sync(self):\n        broadcast(self.w)"),
        Valid("if accelerator.is_main_process:\n    x = torch.randn(3)\nelse:\n    x = torch.zeros(3)\nbroadcast(x)"),
        Valid("def f(x):\n    if rank == 0:\n        x = torch.randn(3)\n    dist.broadcast(x, 0)"),
        # The list is filled in place (or by a call it is handed to) on every rank.
        Valid("records = []\nrecords.append(load())\nfor r in records:\n    x = torch.tensor(r)\ndist.broadcast(x, 0)"),
        Valid("records = []\nif rank == 0:\n    fill(records)\nfor r in records:\n    x = torch.tensor(r)\n"
              "dist.broadcast(x, 0)"),
        Valid("if rank == 0:\n    x = torch.zeros(3)\nelse:\n    x, _ = make()\ndist.broadcast(x, 0)"),
        Valid("try:\n    x = load()\nexcept OSError as x:\n    pass\nif rank == 0:\n    x = torch.ones(3)\n"
              "dist.broadcast(x, 0)"),
    )
    INVALID = (
        # An attribute set only on the main process in __init__, broadcast in another method.
        Invalid("class K:\n    def __init__(self):\n        if accelerator.is_main_process:\n"
                "            self.w = torch.randn(3)\n    def sync(self):\n        return broadcast(self.w)",
                expected_replacement="class K:\n    def __init__(self):\n"
                "        self.w = torch.zeros(3, dtype=torch.float32)\n        if accelerator.is_main_process:\n"
                "            self.w = torch.randn(3)\n    def sync(self):\n        return broadcast(self.w)",
                expected_message="'self.w' is unbound on ranks where 'accelerator.is_main_process' is false when it "
                "reaches broadcast(), which raises AttributeError there",
                range=(6, 16, 6, 33)),
        Invalid("if accelerator.is_main_process:\n    x = torch.randn(3)\nbroadcast(x)",
                expected_message="'x' is unbound on ranks where 'accelerator.is_main_process' is false "
                "when it reaches broadcast(), which raises NameError there", range=(3, 1, 3, 13),
                expected_replacement="x = torch.zeros(3, dtype=torch.float32)\n"
                "if accelerator.is_main_process:\n    x = torch.randn(3)\nbroadcast(x)"),
        Invalid("if rank == 0:\n    x = torch.randint(0, 9, (4,), device=dev)\ndist.broadcast(x, 0)",
                expected_message="'x' is unbound on ranks where 'rank == 0' is false when it reaches "
                "broadcast(), which raises NameError there", range=(3, 1, 3, 21),
                expected_replacement="x = torch.zeros((4,), dtype=torch.int64, device=dev)\n"
                "if rank == 0:\n    x = torch.randint(0, 9, (4,), device=dev)\ndist.broadcast(x, 0)"),
        Invalid("if rank == 0:\n    x = load()\ndist.broadcast(x, src=0)",
                expected_message="'x' is unbound on ranks where 'rank == 0' is false when it reaches "
                "broadcast(), which raises NameError there", range=(3, 1, 3, 25),
                expected_replacement="x = None\nif rank == 0:\n    x = load()\n"
                "x_objects = [x]\ndist.broadcast_object_list(x_objects, src=0)\nx = x_objects[0]"),
        # Bound only in a loop over a list that stays empty off the main process (mini_trainer#38).
        Invalid("records = []\nif rank == 0:\n    records = load()\nfor r in records:\n    x = torch.tensor(r)\n"
                "dist.broadcast(x, 0)",
                expected_message="'x' is unbound on some ranks when it reaches broadcast(), which raises NameError "
                "there", range=(6, 1, 6, 21)),
        # No fix: the source value's shape is unknown and the call is not a statement of its own.
        Invalid("if rank == 0:\n    x = load()\nlog(dist.broadcast(x, src=0))",
                expected_message="'x' is unbound on ranks where 'rank == 0' is false when it reaches "
                "broadcast(), which raises NameError there", range=(3, 5, 3, 29)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        for site in analysis.broadcasts():
            for name in analysis.payload_names(site):
                unbound = lambda definition, world: definition.kind == UNBOUND  # noqa: E731
                split = analysis.split_ranks(site, name.value, unbound) or \
                    analysis.split_ranks(site, name.value, unbound, surely=True)
                if split is not None:
                    fix = placeholder_or_object_list_fix(analysis, site, name.value, split)
                    # `self.weights` never assigned on a rank: the attribute is missing there.
                    error = "AttributeError" if isinstance(name, AttributeName) else "NameError"
                    where = f"on ranks {split.where}" if split.where.startswith("where") else split.where
                    message = (f"'{name.value}' is unbound {where} when it reaches "
                               f"{site.api.short_name}(), which raises {error} there")
                    yield Report(site.call, message, fix, _HELP)

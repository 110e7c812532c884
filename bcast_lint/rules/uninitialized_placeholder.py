from __future__ import annotations

from typing import Iterator

from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.analysis.uninitialised import placeholders, readable_garbage
from bcast_lint.fixes.zeroing import zero_fill_fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid


class UninitializedPlaceholder(Rule):
    """
    ## What it does
    Flags a tensor allocated with `torch.empty`, `torch.empty_like`, `Tensor.new_empty` or
    `torch.Tensor(n)` whose uninitialised memory someone can read through a broadcast: the
    source rank sends it unfilled, or filled only in part (`buf[:k] = x`, `buf += x`, a fill under
    a condition that may be false there); or a slice of it is broadcast (`broadcast(buf[:k])`)
    and the whole buffer is read afterwards; or a rank reads the buffer's values (`buf.sum()`,
    `buf + 1`, `print(buf)`) before the broadcast has filled it. With a source rank the code does not name
    (`src=src`), the source is taken to send garbage only when every rank reaching the broadcast
    holds the uninitialised buffer.

    A receiver that the broadcast overwrites whole is correct and not reported: the
    Megatron-LM style `buf = torch.empty(n)` on the receiving ranks against the data on the source,
    sized from a shape broadcast just before or from metadata every rank has. `torch.empty` is
    the right call there. The opt-in BCL012 (`empty-placeholder`) reports those too, for teams
    that prefer `torch.zeros` for every placeholder. A receiver shaped after a different,
    data-dependent tensor (`torch.empty_like(first_local_item)`) is a shape question, BCL007's.
    A buffer filled whole in place on the way (`buf.zero_()`, `buf.fill_(v)`, `buf.copy_(x)`,
    `buf.normal_()`, `buf[:] = x`) is initialised.

    ## Why is this bad?
    Uninitialised memory holds whatever was there before. Sent by the source rank, it becomes
    every rank's data; left outside the broadcast slice, it is what the receivers read. Nothing
    fails: every rank silently computes with garbage, different on every run.

    ## Example
    ```python
    ids = torch.empty(n, dtype=torch.int64, device=accelerator.device)
    if accelerator.is_main_process:
        ids[:k] = selected
    broadcast(ids)
    ```

    ## Use instead
    ```python
    ids = torch.zeros(n, dtype=torch.int64, device=accelerator.device)
    ```

    ## Fix safety
    Safe: `torch.empty` → `torch.zeros`, `empty_like` → `zeros_like`, `new_empty` → `new_zeros`,
    with the same arguments. Zero-filling only replaces unspecified contents.
    """

    code = "BCL003"
    VALID = (
        Valid("x = torch.zeros(4)\nbroadcast(x)"),
        Valid("x = torch.Tensor([1.0, 2.0])\nbroadcast(x)"),
        Valid("x = torch.Tensor([0.0] * (2 + n))\ndist.broadcast(x, 0)"),
        Valid("x = torch.empty(4)\ny = torch.zeros(4)\nbroadcast(y)"),
        # Filled in place on every rank, or on the source, before the broadcast.
        Valid("x = torch.empty(4)\nx.zero_()\ndist.broadcast(x, 0)"),
        Valid("x = torch.empty(4)\nx.data.fill_(1.0)\nbroadcast(x)"),
        Valid("x = torch.empty(4)\nx[:] = 1.0\nbroadcast(x)"),
        Valid("x = torch.empty(4)\nif rank == 0:\n    x.copy_(torch.randn(4))\ndist.broadcast(x, 0)"),
        # Receivers the broadcast overwrites whole (Megatron-LM, DeepSpeed, transformers).
        Valid("if rank == 0:\n    x = torch.randn(4)\nelse:\n    x = torch.empty(4)\ndist.broadcast(x, 0)"),
        Valid("def f(data, src, group):\n    if dist.get_rank() == src:\n        buf = data\n    else:\n"
              "        buf = torch.empty(data.shape, dtype=data.dtype)\n    dist.broadcast(buf, src, group=group)"),
        Valid("def f(n):\n    size = torch.zeros(1, dtype=torch.long)\n    dist.broadcast(size, 0)\n"
              "    if rank == 0:\n        out = torch.arange(n)\n    else:\n"
              "        out = torch.empty(int(size.item()), dtype=torch.long)\n    dist.broadcast(out, 0)\n    return out"),
        # The sender picked by a test the analysis cannot decide (verl, fairscale, Megatron).
        Valid("def f(w, src):\n    buf = torch.empty_like(w)\n    if dist.get_rank() == src:\n"
              "        buf.data.copy_(w)\n    dist.broadcast(buf, src=src)"),
        Valid("def f(data, src):\n    if dist.get_rank() == src:\n        dist.broadcast(data, src)\n    else:\n"
              "        buf = torch.empty(4)\n        dist.broadcast(buf, src)"),
        # Metadata is not a read of the values.
        Valid("def f(n):\n    if rank == 0:\n        x = torch.arange(n)\n    else:\n        x = torch.empty(n)\n"
              "        assert x.shape == (n,)\n    dist.broadcast(x, 0)\n    return x.sum()"),
        # A slice written on the source and broadcast, and only that slice read.
        Valid("x = torch.empty(8)\nif rank == 0:\n    x[:4] = 1.0\ndist.broadcast(x[:4], 0)\nprint(x[:4])"),
    )
    INVALID = (
        Invalid("x = torch.empty(4)\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates 'x' uninitialised, and the source rank sends it "
                "without filling it: every rank receives garbage", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(4)\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(8)\nif rank == 0:\n    x[:4] = 1.0\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates 'x' uninitialised, and the source rank fills only "
                "part of it (line 11) before sending it whole: the rest reaches every rank as garbage",
                range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nif rank == 0:\n    x[:4] = 1.0\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(8)\nx += 1\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates 'x' uninitialised, and the source rank fills only "
                "part of it (line 10) before sending it whole: the rest reaches every rank as garbage",
                range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nx += 1\ndist.broadcast(x, 0)"),
        Invalid("x = torch.empty(4)\nif rank == 0 and ready:\n    x.fill_(1.0)\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates 'x' uninitialised, and the source rank sends it "
                "without filling it: every rank receives garbage", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(4)\nif rank == 0 and ready:\n    x.fill_(1.0)\n"
                "dist.broadcast(x, 0)"),
        Invalid("x = torch.empty(8)\nif rank == 0:\n    x[:4] = 1.0\ndist.broadcast(x[:4], 0)\nprint(x.sum())",
                expected_message="only 'x[:4]' of the torch.empty() buffer is broadcast, and 'x' is read at "
                "line 13: its other elements are uninitialised on the receiving ranks", range=(1, 5, 1, 19),
                expected_replacement="x = torch.zeros(8)\nif rank == 0:\n    x[:4] = 1.0\n"
                "dist.broadcast(x[:4], 0)\nprint(x.sum())"),
        Invalid("x = y.new_empty((4,)).cuda()\nbroadcast(x)",
                expected_message="Tensor.new_empty() allocates 'x' uninitialised, and the source rank sends "
                "it without filling it: every rank receives garbage", range=(1, 5, 1, 22),
                expected_replacement="x = y.new_zeros((4,)).cuda()\nbroadcast(x)"),
        Invalid("def f(n):\n    if rank == 0:\n        x = torch.arange(n)\n    else:\n        x = torch.empty(n)\n"
                "        print(x.sum())\n    dist.broadcast(x, 0)",
                expected_message="torch.empty() allocates 'x' uninitialised, and it is read at line 14, "
                "before the broadcast fills it: what it held is garbage", range=(5, 13, 5, 27),
                expected_replacement="def f(n):\n    if rank == 0:\n        x = torch.arange(n)\n    else:\n"
                "        x = torch.zeros(n)\n        print(x.sum())\n    dist.broadcast(x, 0)"),
        Invalid("def f(src):\n    x = torch.empty_like(w)\n    dist.broadcast(x, src)",
                expected_message="torch.empty_like() allocates 'x' uninitialised, and every rank, so "
                "whichever is the source, sends it without filling it: every rank receives garbage",
                range=(2, 9, 2, 28),
                expected_replacement="def f(src):\n    x = torch.zeros_like(w)\n    dist.broadcast(x, src)"),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        reported: set = set()
        for placeholder in placeholders(analysis):
            if placeholder.call in reported:
                continue
            garbage = readable_garbage(analysis, placeholder)
            if garbage is not None:
                reported.add(placeholder.call)
                yield Report(placeholder.call, garbage.message,
                             zero_fill_fix(analysis, placeholder.call, placeholder.constructor), garbage.help)

from __future__ import annotations

from typing import Iterator

from bcast_lint.analysis.module import ModuleAnalysis
from bcast_lint.analysis.uninitialised import placeholders, readable_garbage
from bcast_lint.fixes.zeroing import zero_fill_fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid


class EmptyPlaceholder(Rule):
    """
    ## What it does
    Flags a broadcast placeholder allocated with `torch.empty`, `torch.empty_like`,
    `Tensor.new_empty` or `torch.Tensor(n)` even where the broadcast overwrites every element,
    such as the receiving ranks' `buf = torch.empty(n)` against the source rank's data. Opt-in:
    only `--select BCL012` / `extend-select = ["BCL012"]` (the full code) enables it. Where
    uninitialised memory can actually be read, BCL003 reports it instead, so a placeholder is
    never reported twice.

    ## Why is this bad?
    It is not wrong: a receiver the broadcast fills whole may be `torch.empty`, and saves a
    memset. It is fragile: the code is correct only while the source sends exactly that many
    elements, and a later change (a slice broadcast, a fill skipped on the source rank) turns it
    into garbage silently. A zero-filled placeholder costs about the same and makes such a mistake
    show up as zeros, which tests notice. Teams that prefer that habit select this code.

    ## Example
    ```python
    if rank == 0:
        ids = torch.randperm(n, device=device)
    else:
        ids = torch.empty(n, dtype=torch.int64, device=device)
    dist.broadcast(ids, 0)
    ```

    ## Use instead
    ```python
    else:
        ids = torch.zeros(n, dtype=torch.int64, device=device)
    ```

    ## Fix safety
    Safe: `torch.empty` → `torch.zeros`, `empty_like` → `zeros_like`, `new_empty` → `new_zeros`,
    with the same arguments. Zero-filling only replaces unspecified contents.
    """

    code = "BCL012"
    VALID = (
        Valid("if rank == 0:\n    x = torch.randn(4)\nelse:\n    x = torch.zeros(4)\ndist.broadcast(x, 0)"),
        Valid("x = torch.empty(4)\nx.zero_()\ndist.broadcast(x, 0)"),
        # Readable garbage is BCL003's finding, not this one's.
        Valid("x = torch.empty(4)\ndist.broadcast(x, 0)"),
    )
    INVALID = (
        Invalid("if rank == 0:\n    x = torch.randn(4)\nelse:\n    x = torch.empty(4)\ndist.broadcast(x, 0)",
                expected_message="torch.empty() allocates a broadcast placeholder uninitialised: correct while "
                "the broadcast overwrites every element, garbage as soon as it does not",
                range=(4, 9, 4, 23),
                expected_replacement="if rank == 0:\n    x = torch.randn(4)\nelse:\n    x = torch.zeros(4)\n"
                "dist.broadcast(x, 0)"),
        Invalid("def f(w, src):\n    if dist.get_rank() == src:\n        x = w\n    else:\n"
                "        x = torch.empty_like(w)\n    dist.broadcast(x, src)",
                expected_message="torch.empty_like() allocates a broadcast placeholder uninitialised: correct "
                "while the broadcast overwrites every element, garbage as soon as it does not",
                range=(5, 13, 5, 32),
                expected_replacement="def f(w, src):\n    if dist.get_rank() == src:\n        x = w\n    else:\n"
                "        x = torch.zeros_like(w)\n    dist.broadcast(x, src)"),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        found = list(placeholders(analysis))
        readable = {p.call for p in found if readable_garbage(analysis, p) is not None}
        reported: set = set()
        for placeholder in found:
            if placeholder.call in readable or placeholder.call in reported:
                continue
            reported.add(placeholder.call)
            message = (f"{placeholder.shown}() allocates a broadcast placeholder uninitialised: correct "
                       "while the broadcast overwrites every element, garbage as soon as it does not")
            yield Report(placeholder.call, message,
                         zero_fill_fix(analysis, placeholder.call, placeholder.constructor),
                         "Allocate it with zeros if you prefer placeholders that show a missed fill")

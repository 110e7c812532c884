from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis
from bcast_lint.analysis.expressions import (argument_value, call_chain, indexed_device_text,
                                             method_name, positional_arguments)
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.fixes.edits import replace_node
from bcast_lint.model import UNSAFE, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid


class HardcodedDevice(Rule):
    """
    ## What it does
    Flags a broadcast tensor (the placeholder or the source value) placed on a literal device
    index: `"cuda:0"`, `torch.device("cuda", 0)`, `.cuda(0)`, `.to("cuda:1")`, `.to(0)`,
    `device=0`.

    ## Why is this bad?
    Every rank runs the same line, so every rank puts the tensor on the same GPU. NCCL refuses
    with `ncclInvalidUsage ... Duplicate GPU detected`, or the job hangs; on a CPU-only machine the
    code fails before reaching the broadcast.

    ## Example
    ```python
    buf = torch.zeros(n, device="cuda:0")
    dist.broadcast(buf, src=0)
    ```

    ## Use instead
    ```python
    buf = torch.zeros(n, device=accelerator.device)  # or f"cuda:{local_rank}"
    dist.broadcast(buf, src=0)
    ```

    ## Fix safety
    Unsafe: the literal becomes the in-scope `Accelerator`/`PartialState`'s `.device`, or
    `f"cuda:{local_rank}"` when a local-rank variable is in scope; this changes where the tensor
    lives on every rank but rank 0. Without either, no fix is offered.
    """

    code = "BCL004"
    VALID = (
        Valid("x = torch.zeros(4, device=accelerator.device)\nbroadcast(x)"),
        Valid("x = torch.zeros(4, device=f'cuda:{local_rank}')\ndist.broadcast(x, 0)"),
        Valid("x = torch.zeros(4, device='cuda')\ndist.broadcast(x, 0)"),
        Valid("x = torch.zeros(4).to(torch.cuda.current_device())\ndist.broadcast(x, 0)"),
        Valid("y = torch.zeros(4, device='cuda:0')\nx = torch.zeros(4)\ndist.broadcast(x, 0)"),
    )
    INVALID = (
        Invalid("x = torch.zeros(4, device='cuda:0')\nbroadcast(x)",
                expected_message="the broadcast tensor is placed on the hard-coded device 'cuda:0', the "
                "same GPU on every rank (NCCL: 'Duplicate GPU detected', or a hang)", range=(1, 5, 1, 36),
                expected_replacement="x = torch.zeros(4, device=accelerator.device)\nbroadcast(x)"),
        Invalid("x = torch.zeros(4).cuda(0)\ndist.broadcast(x, 0)",
                expected_message="the broadcast tensor is placed on the hard-coded device 'cuda:0', the "
                "same GPU on every rank (NCCL: 'Duplicate GPU detected', or a hang)", range=(1, 5, 1, 27),
                expected_replacement="x = torch.zeros(4).cuda(accelerator.device)\ndist.broadcast(x, 0)"),
        Invalid("x = torch.zeros(4).to(torch.device('cuda', 1))\ndist.broadcast(x, 0)",
                expected_message="the broadcast tensor is placed on the hard-coded device 'cuda:1', the "
                "same GPU on every rank (NCCL: 'Duplicate GPU detected', or a hang)", range=(1, 5, 1, 47),
                expected_replacement="x = torch.zeros(4).to(accelerator.device)\ndist.broadcast(x, 0)"),
        Invalid("dev = 'cuda:0'\nx = torch.zeros(4, device=dev)\ndist.broadcast(x, 0)",
                expected_message="the broadcast tensor is placed on the hard-coded device 'cuda:0', the "
                "same GPU on every rank (NCCL: 'Duplicate GPU detected', or a hang)", range=(2, 5, 2, 31)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        reported: set = set()
        for site in analysis.broadcasts():
            if site.api.payload != apis.TENSOR or site.payload is None:
                continue
            for expr in (site.payload, *analysis.payload_names(site)):
                for value in analysis.reaching_values(site, expr):
                    for call in call_chain(value):
                        literal = self._literal_device(analysis, site, call)
                        if literal is not None and call not in reported:
                            reported.add(call)
                            yield self._report(analysis, site, call, *literal)

    def _literal_device(self, analysis: ModuleAnalysis, site: CallSite,
                        call: cst.Call) -> Optional[tuple[str, cst.BaseExpression, bool]]:
        """(device, the expression naming it, whether the literal is written in the call)."""
        method = method_name(call)
        candidates = [argument_value(call, keyword="device")]
        if method in ("to", "cuda"):
            candidates.extend(positional_arguments(call)[:1])
        for candidate in filter(None, candidates):
            for value in analysis.reaching_values(site, candidate):
                device = indexed_device_text(value)
                if device is not None:
                    shown = f"cuda:{device}" if device.isdigit() else device
                    return shown, candidate, value is candidate
        return None

    def _report(self, analysis: ModuleAnalysis, site: CallSite, call: cst.Call, device: str,
                written: cst.BaseExpression, direct: bool) -> Report:
        message = (f"the broadcast tensor is placed on the hard-coded device '{device}', the same "
                   "GPU on every rank (NCCL: 'Duplicate GPU detected', or a hang)")
        # A literal reached through a variable may be used elsewhere too: fix only literals
        # written in the allocation itself.
        fix = self._fix(analysis, site, written) if direct else None
        return Report(call, message, fix, 'Use accelerator.device or f"cuda:{local_rank}"')

    @staticmethod
    def _fix(analysis: ModuleAnalysis, site: CallSite, literal: cst.BaseExpression) -> Optional[Fix]:
        accelerator = analysis.accelerator_in_scope(site)
        if accelerator is not None:
            replacement = f"{accelerator}.device"
        else:
            local_rank = analysis.local_rank_in_scope(site)
            if local_rank is None:
                return None
            # `.cuda(0)` / `device=0` take an index: keep it an index.
            is_index = isinstance(literal, cst.Integer)
            replacement = local_rank if is_index else f'f"cuda:{{{local_rank}}}"'
        edit = replace_node(analysis, literal, replacement)
        return Fix(UNSAFE, f"Use `{replacement}` instead of the fixed device", (edit,))

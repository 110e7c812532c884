# verify: hang
"""A reporter enabled on the main process only, handed a callback that gathers.

Modelled on https://github.com/radixark/miles/pull/2684 (review: a new `dist.all_reduce` inside
`log_train_step`, which is "only invoked from [...] inside `is_first_replica_megatron_main_rank()`
[...] All other ranks skip the call entirely, so the all_reduce deadlocks") and
https://github.com/huggingface/trl/issues/7310. Here the gather sits in a lambda that
`Reporter.report()` (another module) calls only where it is enabled.
"""
import torch
from accelerate import Accelerator

from mod_reporting import Reporter

LOG_EVERY = 2


def main():
    accelerator = Accelerator()
    reporter = Reporter(enabled=accelerator.is_main_process)
    torch.manual_seed(accelerator.process_index)
    w = torch.randn(3, requires_grad=True)
    for step in range(1, 5):
        x = torch.randn(4, 3)
        loss = (x @ w).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.05 * accelerator.reduce(w.grad, reduction="mean")
        w.grad = None
        if step % LOG_EVERY == 0:
            reporter.report(step, lambda: {"loss": accelerator.gather(loss.detach()).mean().item()})  # expect: BCL005
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()

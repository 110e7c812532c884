# verify: ok
"""Like `lazy_metric_reporter_gather`: a reporter enabled on the main process only, handed a lazy
callback; but the callback reads values every process already agreed on (the gather runs on every
process before), so nothing collective hides behind the reporter's test.
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
    history = []
    for step in range(1, 5):
        x = torch.randn(4, 3)
        loss = (x @ w).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.05 * accelerator.reduce(w.grad, reduction="mean")
        w.grad = None
        history.append(accelerator.gather(loss.detach()).mean().item())
        if step % LOG_EVERY == 0:
            reporter.report(step, lambda: {"loss": sum(history[-LOG_EVERY:]) / LOG_EVERY})
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()

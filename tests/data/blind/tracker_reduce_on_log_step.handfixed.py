# verify: ok
"""Every process reduces the tracker on logging steps; only the print is gated on the main
process."""
import torch
from accelerate import Accelerator

from mod_metrics import MetricsTracker

LOG_EVERY = 2


def main():
    accelerator = Accelerator()
    torch.manual_seed(accelerator.process_index)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    tracker = MetricsTracker(accelerator, "loss", "grad_norm")
    for step in range(1, 5):
        opt.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        accelerator.backward(loss)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tracker.update(loss=loss.item(), grad_norm=norm.item())
        if step % LOG_EVERY == 0:
            tracker.reduce_across_ranks()
            if accelerator.is_main_process:
                print(f"step {step}: {tracker}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

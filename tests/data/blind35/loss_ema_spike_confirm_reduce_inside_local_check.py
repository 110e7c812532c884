# verify: error,hang
"""A loss-spike guard that confirms the spike across processes, but only after a local check.

Modelled on https://github.com/GaTech-RL2/EgoVerse/pull/163 ("multi gpu safe loss ema spike
check"): each process keeps an EMA of its own loss; when its batch loss exceeds SPIKE times that
EMA it asks the others with `accelerator.reduce(loss, "mean")` whether the spike is global, and
skips the micro-batch if so. The confirming reduce sits inside the local test, so it runs only on
the process whose shard holds the spiking rows, while the other process is already in
`accelerator.backward` (DDP's gradient all-reduce). Gradient accumulation (`accumulate`,
`sync_gradients`, `clip_grad_norm_`) as in the usual Accelerate loop.
"""
import torch
from accelerate import Accelerator

SPIKE = 3.0
STEPS = 8


def shard(step, index, world):
    g = torch.Generator().manual_seed(50 + step)
    x = torch.randn(8, 3, generator=g)
    y = x.sum(dim=1, keepdim=True)
    if step == 5:
        y[1] *= 25.0  # row 1 of this global batch: an exploding target
    return x[index::world], y[index::world]


def main():
    accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, opt = accelerator.prepare(model, opt)
    loss_ema = None
    for step in range(STEPS):
        x, y = shard(step, accelerator.process_index, accelerator.num_processes)
        with accelerator.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(x), y)
            if loss_ema is not None and loss.item() > SPIKE * loss_ema:
                global_loss = accelerator.reduce(loss.detach(), "mean")  # expect: BCL005
                if global_loss.item() > SPIKE * loss_ema:
                    accelerator.print(f"step {step}: loss spike, skipping micro-batch")
                    continue
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
        value = loss.item()
        loss_ema = value if loss_ema is None else 0.9 * loss_ema + 0.1 * value
    accelerator.print("done")
    accelerator.end_training()


if __name__ == "__main__":
    main()

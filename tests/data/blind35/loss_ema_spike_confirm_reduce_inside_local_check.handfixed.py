# verify: ok
"""Hand fix of loss_ema_spike_confirm_reduce_inside_local_check: the loss is reduced on every
process at every micro-batch, and both the spike test and the loss EMA use the reduced value, so
every process skips the same micro-batches.
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
            global_loss = accelerator.reduce(loss.detach(), "mean")
            if loss_ema is not None and global_loss.item() > SPIKE * loss_ema:
                accelerator.print(f"step {step}: loss spike, skipping micro-batch")
                continue
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad()
        value = global_loss.item()
        loss_ema = value if loss_ema is None else 0.9 * loss_ema + 0.1 * value
    accelerator.print("done")
    accelerator.end_training()


if __name__ == "__main__":
    main()

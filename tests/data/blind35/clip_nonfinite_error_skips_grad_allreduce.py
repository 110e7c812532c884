# verify: hang,error
"""Per-worker gradient clipping with error_if_nonfinite=True, before a hand-written gradient average.

Modelled on https://github.com/pytorch/pytorch/pull/55169 (the `error_if_nonfinite` error of
`clip_grad_norm_` tripped up a lot of training code): a loop clips each worker's own gradients
before averaging them (as Horovod-style scripts do), with `error_if_nonfinite=True`, and treats
the `RuntimeError` as "bad batch, skip it". One row of the global batch has a NaN label; only the
worker whose shard holds that row raises, and its `continue` skips the gradient all-reduces that
the other worker is already waiting in.
"""
import torch
import torch.distributed as dist

STEPS = 5
BAD_STEP = 3


def shard(step, rank, world):
    g = torch.Generator().manual_seed(7 + step)
    x = torch.randn(12, 6, generator=g)
    y = x[:, :2].sum(dim=1)
    if step == BAD_STEP:
        y[5] = float("nan")  # a corrupt label in row 5 of this global batch
    return x[rank::world], y[rank::world]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    skipped = 0
    for step in range(STEPS):
        x, y = shard(step, rank, world)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
        loss.backward()
        try:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        except RuntimeError as err:
            skipped += 1
            print(f"step {step}: skipping batch ({str(err).splitlines()[0][:60]})")
            continue
        for p in model.parameters():
            dist.all_reduce(p.grad)  # expect: BCL005
            p.grad /= world
        opt.step()
    print(f"rank {rank}: {STEPS - skipped} steps, {skipped} skipped")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

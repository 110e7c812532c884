# verify: error
"""The main process previews predictions through the DDP wrapper, whose forward broadcasts buffers.

Modelled on yiqiao-yin/deepspeed-course#28 ("Run the MoE eval on every rank": non-zero ranks
returned before the evaluation and rank 0 alone called the wrapped model, whose forward
communicates; "Guard the output, never the collective"): `SampleLogger` is enabled on rank 0
only and, every second step, runs `model(x)` on a few rows to print them. The model has a
`BatchNorm1d`, so with `broadcast_buffers=True` (the default) each DDP forward starts by
broadcasting the running statistics from rank 0.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS, PREVIEW_EVERY = 6, 2


class SampleLogger:
    def __init__(self, enabled, every):
        self.enabled, self.every = enabled, every

    def due(self, step):
        return self.enabled and step % self.every == 0

    @torch.no_grad()
    def log(self, model, x):
        preds = model(x).squeeze(-1)
        print(f"step preview: {[round(p, 2) for p in preds.tolist()]}")


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(10 + rank)
    x = torch.randn(STEPS * 4, 4, generator=g)
    y = x.sum(1, keepdim=True)
    samples = SampleLogger(enabled=rank == 0, every=PREVIEW_EVERY)
    for step in range(STEPS):
        xb, yb = x[step * 4:(step + 1) * 4], y[step * 4:(step + 1) * 4]
        loss = nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if samples.due(step):
            samples.log(model, xb[:2])  # expect: BCL011
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

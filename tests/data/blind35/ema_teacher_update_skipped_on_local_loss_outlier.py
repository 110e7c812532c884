# verify: divergent check=EMA_SUM
"""A student step and EMA-teacher update skipped when this process's loss is an outlier.

Modelled on https://github.com/discovery-unicamp/Minerva/pull/111 (the review asks to skip the
optimizer step and the EMA update when the loss is bad): the guard compares each process's own
batch loss with its own running average, so under DDP (gradients already averaged by the
backward) a process whose shard holds a mislabelled row skips `opt.step()` and
`ema.update_parameters()` alone. Nothing fails: the student weights and the EMA teacher simply
differ between the processes from then on, and the teacher that is saved depends on the process.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

STEPS = 8
OUTLIER = 4.0
EMA_SUM = None


def shard(step, rank, world):
    g = torch.Generator().manual_seed(300 + step)
    x = torch.randn(16, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-1.0], [0.5], [2.0]])
    if step == 5:
        y[9] += 40.0  # one mislabelled row (global row 9)
    return x[rank::world], y[rank::world]


def main():
    global EMA_SUM
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    ema = AveragedModel(model.module, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_avg = None
    for step in range(STEPS):
        x, y = shard(step, rank, world)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        value = loss.item()
        if loss_avg is not None and value > OUTLIER * loss_avg:  # expect: BCL002
            print(f"step {step}: loss {value:.2f} is an outlier (avg {loss_avg:.2f}), skipping update")
            continue
        opt.step()
        ema.update_parameters(model.module)
        loss_avg = value if loss_avg is None else 0.8 * loss_avg + 0.2 * value
    EMA_SUM = round(sum(p.sum().item() for p in ema.module.parameters()), 4)
    print(f"rank {rank}: EMA_SUM {EMA_SUM}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

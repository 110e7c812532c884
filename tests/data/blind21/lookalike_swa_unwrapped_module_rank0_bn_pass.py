# verify: ok
"""Look-alike: the same rank-0-only batch-norm refresh, but the AveragedModel wraps `model.module`.

The averaged copy is a plain nn.Sequential (deep-copied from the unwrapped module), so its
forward on rank 0 alone runs no collective. Compare swa_averaged_ddp_rank0_bn_pass.py
(https://github.com/pytorch/pytorch/issues/59363).
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.swa_utils import AveragedModel, SWALR


def make_net():
    return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(make_net())
    swa_model = AveragedModel(model.module)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    swa_sched = SWALR(opt, swa_lr=0.01)
    g = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randn(8, 6, generator=g), torch.randint(0, 2, (8,), generator=g)) for _ in range(4)]

    for epoch in range(3):
        for x, y in batches:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if epoch >= 1:
            swa_model.update_parameters(model.module)
            swa_sched.step()

    if rank == 0:
        # recompute BN running stats of the averaged weights before exporting them
        for module in swa_model.modules():
            if isinstance(module, nn.BatchNorm1d):
                module.reset_running_stats()
        swa_model.train()
        with torch.no_grad():
            for x, _ in batches:
                swa_model(x)
        torch.save(swa_model.module.state_dict(), "/dev/null")

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

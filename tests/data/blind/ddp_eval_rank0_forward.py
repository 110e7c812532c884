# verify: hang
"""A small Trainer class validates on the main process only, through the same
`DistributedDataParallel` wrapper it trains with, while the other process waits at a barrier.
With `broadcast_buffers=True` (the default) every forward of the wrapper broadcasts the BatchNorm
buffers, so the main process's validation forward is a collective the other process never joins.

Modelled on pytorch/pytorch#54059 "Using torch.distributed.barrier() makes the whole code hang"
(https://github.com/pytorch/pytorch/issues/54059) and FareedKhan-dev/train-llm-from-scratch#32
"fix: multi-GPU (DDP) training hangs in SFT, Reward, DPO"
(https://github.com/FareedKhan-dev/train-llm-from-scratch/pull/32): final evaluation on rank 0
only through the DDP-wrapped model.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self):
        self.rank = dist.get_rank()
        net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))
        self.model = DDP(net)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)

    def train_step(self, x):
        self.opt.zero_grad()
        self.model(x).pow(2).mean().backward()
        self.opt.step()

    @torch.no_grad()
    def validate(self, x):
        self.model.eval()
        loss = self.model(x).pow(2).mean().item()
        self.model.train()
        return loss

    def fit(self, epochs):
        torch.manual_seed(self.rank)
        for epoch in range(epochs):
            for _ in range(3):
                self.train_step(torch.randn(6, 4))
            if self.rank == 0:
                print(f"epoch {epoch}: val {self.validate(torch.randn(6, 4)):.3f}")  # expect: BCL011
            dist.barrier()


def main():
    dist.init_process_group("gloo")
    Trainer().fit(2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

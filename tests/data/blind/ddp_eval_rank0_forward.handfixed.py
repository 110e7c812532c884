# verify: ok
"""The main process validates through the unwrapped module (`self.model.module`), which runs no
collective; the other process waits at the barrier as before."""
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
        self.model.module.eval()
        loss = self.model.module(x).pow(2).mean().item()
        self.model.module.train()
        return loss

    def fit(self, epochs):
        torch.manual_seed(self.rank)
        for epoch in range(epochs):
            for _ in range(3):
                self.train_step(torch.randn(6, 4))
            if self.rank == 0:
                print(f"epoch {epoch}: val {self.validate(torch.randn(6, 4)):.3f}")
            dist.barrier()


def main():
    dist.init_process_group("gloo")
    Trainer().fit(2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

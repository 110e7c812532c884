# verify: hang
"""`make_dataset` does the (simulated) I/O on rank 0 and returns from inside that branch, so the
barrier at the end of the method is reached only by the other process, which also gets `None`
back; rank 0 goes on to the first gradient all_reduce.

Modelled on Lightning-AI/pytorch-lightning#20536 "lightning.Fabric meets deadlock when loading
nn.Module" (https://github.com/Lightning-AI/pytorch-lightning/issues/20536): "this will never be
reached on rank 0, also the make_dataset function will return None on rank 1".
"""
import torch
import torch.distributed as dist
from torch.utils.data import TensorDataset


class Experiment:
    def __init__(self):
        self.rank = dist.get_rank()
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)

    def make_dataset(self, x, y):
        if self.rank == 0:
            dataset = TensorDataset(x, y)  # in the real program: read and cache files
            return dataset
        dist.barrier()  # expect: BCL005

    def fit(self):
        ds = self.make_dataset(torch.randn(8, 4), torch.randn(8, 1))
        opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        for x, y in ds:
            opt.zero_grad()
            (self.model(x) - y).pow(2).mean().backward()
            for p in self.model.parameters():
                dist.all_reduce(p.grad)
            opt.step()


def main():
    dist.init_process_group("gloo")
    Experiment().fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

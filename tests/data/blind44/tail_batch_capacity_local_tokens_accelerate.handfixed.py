# verify: ok
"""Hand fix: the capacity is computed from the largest batch of any process (an all-reduce MAX).

Modelled on https://github.com/microsoft/Tutel/issues/173: with a positive capacity factor the
layer assumes every device holds the same number of tokens; at the end of a dataset (here an
evaluation loader prepared with even_batches=False) one process's last batch is smaller, its
capacity is smaller, and the dispatch all_to_all exchanges buffers of different sizes.
"""
import math

import torch
import torch.distributed as dist
from accelerate import Accelerator, DataLoaderConfiguration
from torch.utils.data import DataLoader, TensorDataset

D, E, CAPACITY_FACTOR = 4, 2, 1.0


class Top1MoE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(D, E)
        self.local_expert = torch.nn.Linear(D, D)

    def forward(self, x):
        idx = self.gate(x).argmax(dim=-1)
        tokens = torch.tensor([x.shape[0]])
        dist.all_reduce(tokens, op=dist.ReduceOp.MAX)
        capacity = math.ceil(CAPACITY_FACTOR * int(tokens) / E)
        buf = x.new_zeros(E, capacity, D)
        for e in range(E):
            rows = x[idx == e][:capacity]
            buf[e, : rows.shape[0]] = rows
        recv = torch.empty_like(buf)
        dist.all_to_all_single(recv, buf)
        out = self.local_expert(recv)
        back = torch.empty_like(out)
        dist.all_to_all_single(back, out)
        return back.sum()


def main():
    accelerator = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(even_batches=False))
    torch.manual_seed(0)
    model = Top1MoE()
    loader = accelerator.prepare(DataLoader(TensorDataset(torch.randn(22, D)), batch_size=4))
    total = 0.0
    with torch.no_grad():
        for (x,) in loader:
            total += float(model(x))
    accelerator.wait_for_everyone()
    print(f"process {accelerator.process_index}: {total:.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

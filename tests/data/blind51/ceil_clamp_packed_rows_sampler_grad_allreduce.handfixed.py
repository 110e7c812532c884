# verify: ok
"""Hand fix of ceil_clamp_packed_rows_sampler_grad_allreduce.

As in the fix of https://github.com/mlcommons/storage/issues/455 (DLIO PR 25): the per-process
share is `N // size` (floor), so every process gets the same number of packed rows and batches;
the leftover row is dropped.
"""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Sampler

SEQ, N_ROWS = 8, 11
PACKED = torch.arange(N_ROWS * SEQ, dtype=torch.float32).remainder(7).view(N_ROWS, SEQ) / 7


class ContiguousSampler(Sampler):
    def __init__(self, num_samples, rank, size):
        per_proc = num_samples // size
        start = rank * per_proc
        self.indices = list(range(start, start + per_proc))

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return len(self.indices)


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(SEQ, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sampler = ContiguousSampler(N_ROWS, dist.get_rank(), dist.get_world_size())
    loader = DataLoader(PACKED, batch_size=2, sampler=sampler, drop_last=True)
    for epoch in range(2):
        for rows in loader:
            loss = model(rows).pow(2).mean()
            loss.backward()
            average_gradients(model)
            opt.step()
            opt.zero_grad()
    print("weight sum:", model.weight.sum().item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

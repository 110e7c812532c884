# verify: ok
"""Modelled on https://github.com/meta-pytorch/torchrec/issues/1014 and
https://github.com/pytorch/pytorch/issues/22584: a project's own evaluation sampler strides the
dataset without padding (`range(rank, n, world)`), so with drop_last=False one rank gets one more
batch than the other and its per-batch all_reduce has no partner.
"""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Sampler, TensorDataset


class StridedEvalSampler(Sampler):
    """Every sample exactly once: no padding, so metrics are not skewed by duplicates."""

    def __init__(self, dataset, num_replicas, rank):
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank

    def __iter__(self):
        return iter(range(self.rank, len(self.dataset), self.num_replicas))

    def __len__(self):
        return len(range(self.rank, len(self.dataset), self.num_replicas))


def build_eval_loader(n_samples=9, batch_size=2):
    ds = TensorDataset(torch.arange(n_samples, dtype=torch.float32).unsqueeze(1))
    sampler = StridedEvalSampler(ds, dist.get_world_size(), dist.get_rank())
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, drop_last=False)


@torch.no_grad()
def evaluate(model, loader):
    totals = torch.zeros(2)
    for (x,) in loader:
        totals += torch.stack([model(x).sum(), torch.tensor(float(len(x)))])
    dist.all_reduce(totals)  # one reduction per rank, however many batches it had
    return (totals[0] / totals[1]).item()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    print(evaluate(model, build_eval_loader()))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

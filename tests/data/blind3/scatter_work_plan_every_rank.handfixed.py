# verify: ok
"""Modelled on https://github.com/pytorch/pytorch/pull/86069 (the dist.scatter documentation fix
for https://github.com/pytorch/pytorch/issues/84566): a work planner builds the list of chunks to
scatter on every rank and every rank hands it to dist.scatter, which accepts scatter_list only on
the source rank.
"""
import torch
import torch.distributed as dist


class WorkPlanner:
    def __init__(self, n_items, src=0):
        self.n_items = n_items
        self.src = src
        self.world = dist.get_world_size()

    def plan(self):
        ids = torch.randperm(self.n_items, generator=torch.Generator().manual_seed(1))
        return list(ids.chunk(self.world))

    def my_share(self):
        share = torch.empty(self.n_items // self.world, dtype=torch.long)
        chunks = self.plan() if dist.get_rank() == self.src else None
        dist.scatter(share, scatter_list=chunks, src=self.src)
        return share


def process(ids):
    done = torch.tensor([float(ids.sum())])
    dist.all_reduce(done)
    return done.item()


def main():
    dist.init_process_group("gloo")
    planner = WorkPlanner(n_items=8)
    print(process(planner.my_share()))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

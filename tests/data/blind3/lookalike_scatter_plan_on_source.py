# verify: ok
"""Look-alike of scatter_work_plan_every_rank: the planner's plan() returns the chunks only on
the source rank and None elsewhere, so dist.scatter gets its list where it belongs.
"""
import torch
import torch.distributed as dist


class WorkPlanner:
    def __init__(self, n_items, src=0):
        self.n_items = n_items
        self.src = src
        self.world = dist.get_world_size()

    def plan(self):
        if dist.get_rank() != self.src:
            return None
        ids = torch.randperm(self.n_items, generator=torch.Generator().manual_seed(1))
        return list(ids.chunk(self.world))

    def my_share(self):
        share = torch.zeros(self.n_items // self.world, dtype=torch.long)
        dist.scatter(share, scatter_list=self.plan(), src=self.src)
        return share


def main():
    dist.init_process_group("gloo")
    share = WorkPlanner(n_items=8).my_share()
    total = torch.tensor([float(share.sum())])
    dist.all_reduce(total)
    print(total.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

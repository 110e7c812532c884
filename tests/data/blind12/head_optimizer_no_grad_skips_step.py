# verify: error
"""A sharded optimizer whose `step()` returns early on a process where none of its parameters got
a gradient.

Modelled on https://github.com/facebookresearch/optimizers/pull/149 (the distributed optimizer
skipped its update on ranks without gradients, and DDP Shampoo hung in the all-gather the other
ranks entered). One `ShardedSGD` per task head: each averages the gradients with `all_reduce`,
updates its own slice of every parameter and all-gathers the slices. The batch schedule deals the
tasks out by rank, so at the first step process 0 trains the image head and process 1 the text
head: each head's optimizer finds no gradient on one of the two processes.
"""
import torch
import torch.distributed as dist

SCHEDULE = ["image", "text", "text", "image", "image", "text"]


class ShardedSGD(torch.optim.Optimizer):
    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self):
        params = [p for g in self.param_groups for p in g["params"] if p.grad is not None]
        if not params:
            return  # nothing to update on this process
        world, rank = dist.get_world_size(), dist.get_rank()
        lr = self.param_groups[0]["lr"]
        for p in params:
            dist.all_reduce(p.grad)  # expect: BCL005
            p.grad /= world
            shards = p.view(-1).tensor_split(world)
            mine = shards[rank] - lr * p.grad.view(-1).tensor_split(world)[rank]
            gathered = [torch.empty_like(s) for s in shards]
            dist.all_gather(gathered, mine)
            p.view(-1).copy_(torch.cat(gathered))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    trunk = torch.nn.Linear(6, 8)
    heads = {"image": torch.nn.Linear(8, 4), "text": torch.nn.Linear(8, 6)}  # even sizes: equal slices
    optimizers = [ShardedSGD(trunk.parameters(), 0.1)] + [ShardedSGD(h.parameters(), 0.1) for h in heads.values()]
    g = torch.Generator().manual_seed(rank)
    for task in SCHEDULE[rank::world]:
        x = torch.randn(4, 6, generator=g)
        target = torch.randint(0, heads[task].out_features, (4,), generator=g)
        loss = torch.nn.functional.cross_entropy(heads[task](trunk(x).relu()), target)
        loss.backward()
        for opt in optimizers:
            opt.step()
            opt.zero_grad(set_to_none=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

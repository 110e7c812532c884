# verify: error
"""Every rank draws the same task from a shared seed, until rank 0's preview iterates a DataLoader.

Modelled on bigscience-workshop/Megatron-DeepSpeed#276
(https://github.com/bigscience-workshop/Megatron-DeepSpeed/pull/276) and NVIDIA/Megatron-LM#206
(https://github.com/NVIDIA/Megatron-LM/pull/206): creating a DataLoader iterator draws a base seed
from the global torch RNG, and where only one rank iterates that loader, the ranks' torch RNG states
part. Here the tasks of a multi-task run are drawn with `torch.randint` after a common
`torch.manual_seed`, so that all ranks train the same head. Rank 0 writes a preview of the first
validation batch (`next(iter(val_loader))`), which shifts its stream: from then on the ranks may draw
different tasks and all-reduce the gradients of heads of different sizes.
"""
import torch
import torch.distributed as dist

TASKS = {"intent": 5, "slot": 9, "domain": 3}


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(6, 8)
        self.heads = torch.nn.ModuleDict({t: torch.nn.Linear(8, n) for t, n in TASKS.items()})

    def forward(self, x, task):
        return self.heads[task](torch.relu(self.trunk(x)))


def sync_grads(params, world):
    for p in params:
        dist.all_reduce(p.grad)  # expect: BCL005
        p.grad /= world


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234)
    model = MultiTask()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    val_loader = torch.utils.data.DataLoader(torch.randn(6, 6), batch_size=3)
    if rank == 0:
        print("preview of the validation data:", next(iter(val_loader))[0, :3].tolist())
    names = list(TASKS)
    data = torch.Generator().manual_seed(rank)
    for step in range(6):
        task = names[int(torch.randint(len(names), ()))]
        x = torch.randn(4, 6, generator=data)
        y = torch.randint(0, TASKS[task], (4,), generator=data)
        loss = torch.nn.functional.cross_entropy(model(x, task), y)
        opt.zero_grad()
        loss.backward()
        sync_grads([p for p in model.parameters() if p.grad is not None], world)
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

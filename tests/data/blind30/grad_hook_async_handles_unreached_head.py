# verify: error,hang
"""Gradients all-reduced from per-parameter hooks, the work handles kept in a pending list.

Modelled on https://github.com/horovod/horovod/pull/546 (gradient hooks start an asynchronous
all-reduce per parameter and record its handle; `synchronize()` waits for the recorded handles,
and a parameter whose hook did not fire leaves the processes out of step). Each parameter's
post-accumulate-grad hook starts `dist.all_reduce(p.grad, async_op=True)` and appends the
work to this process's `pending` list, which is waited on before the optimizer step. The
auxiliary head runs only for batches that contain a boxed sample; one process's shard has none,
so the head's hooks never fire there and the two processes start different all-reduces.
"""
import torch
import torch.distributed as dist

pending = []


def sync_hook(p):
    pending.append(dist.all_reduce(p.grad, async_op=True))  # expect: BCL005


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(8, 8)
        self.cls = torch.nn.Linear(8, 3)
        self.box = torch.nn.Linear(8, 4)

    def forward(self, x, has_box):
        h = torch.relu(self.trunk(x))
        out = self.cls(h).pow(2).mean()
        if has_box.any():
            out = out + self.box(h[has_box]).pow(2).mean()
        return out


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Detector()
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(sync_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(8, 8, generator=g)
    has_box = torch.tensor([True, False, True, False, False, False, False, False])
    shard = slice(rank * 8 // world, (rank + 1) * 8 // world)
    for step in range(2):
        loss = model(x[shard], has_box[shard])
        opt.zero_grad()
        loss.backward()
        for work in pending:
            work.wait()
        pending.clear()
        for p in model.parameters():
            if p.grad is not None:
                p.grad /= world
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Horovod-style gradient hooks that all-reduce each parameter's grad, and a head some batches skip.

Modelled on horovod/horovod#597 (https://github.com/horovod/horovod/pull/597), where
`loss.backward()` "only activates the hooks of some gradients", and NVIDIA/TransformerEngine#781
(https://github.com/NVIDIA/TransformerEngine/pull/781), which stopped reducing from autograd hooks
because of hangs. Every parameter gets a `register_hook` that all-reduces its gradient. The
auxiliary depth head only enters the loss for batches that carry depth targets; rank 1's second
batch has none, so the head's two hooks never fire there and the ranks' all-reduces shift.

Hand-fixed: gradients are averaged after `backward()` over every parameter, with a zero gradient for a
head the batch did not use (as horovod#597 forced the all-reduce of all gradients in `step()`).
"""
import torch
import torch.distributed as dist


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(6, 8)
        self.cls_head = torch.nn.Linear(8, 3)
        self.depth_head = torch.nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return self.cls_head(h), h


def average_gradients(model, world):
    for p in model.parameters():
        if p.grad is None:
            p.grad = torch.zeros_like(p)  # a head this batch did not use still takes part
        dist.all_reduce(p.grad)
        p.grad /= world


# one file per batch, dealt FILES[rank::world]; the fourth file was exported without depth maps
FILES_WITH_DEPTH = [True, True, True, False, True, True]


def make_batches(rank, world):
    gen = torch.Generator().manual_seed(10 + rank)
    batches = []
    for has_depth in FILES_WITH_DEPTH[rank::world]:
        x = torch.randn(4, 6, generator=gen)
        y = torch.randint(0, 3, (4,), generator=gen)
        depth = torch.rand(4, 1, generator=gen) if has_depth else None
        batches.append((x, y, depth))
    return batches


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y, depth in make_batches(rank, world):
        logits, h = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        if depth is not None:
            loss = loss + torch.nn.functional.mse_loss(model.depth_head(h), depth)
        opt.zero_grad()
        loss.backward()
        average_gradients(model, world)
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

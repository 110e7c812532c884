# verify: hang
"""`compute_loss` raises when a micro-batch has no usable target (every label masked), and the
training loop catches that with a per-process `continue`. Rank 1's second batch is fully masked,
so rank 1 skips that step's gradient all_reduce and is one collective ahead of rank 0 from then on.

Modelled on NVIDIA-NeMo/Automodel#2468 "fix(speculative): keep DFlash DDP ranks in lockstep on
no-valid-anchor skips" (https://github.com/NVIDIA-NeMo/Automodel/pull/2468): a
`NoValidAnchorsError` caught with a per-rank `continue` before backward.
"""
import torch
import torch.distributed as dist

IGNORE = -100


class NoValidTargetsError(ValueError):
    pass


def compute_loss(model, x, labels):
    keep = labels != IGNORE
    if not keep.any():
        raise NoValidTargetsError("every label in this batch is masked")
    logits = model(x)
    return torch.nn.functional.cross_entropy(logits[keep], labels[keep])


def make_batches(rank):
    torch.manual_seed(rank)
    batches = []
    for step in range(3):
        x = torch.randn(4, 5)
        labels = torch.randint(0, 3, (4,))
        if rank == 1 and step == 1:
            labels[:] = IGNORE
        batches.append((x, labels))
    return batches


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    skipped = 0
    for x, labels in make_batches(rank):
        opt.zero_grad()
        try:
            loss = compute_loss(model, x, labels)
        except NoValidTargetsError:
            skipped += 1
            continue
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)  # expect: BCL005
        opt.step()
    print(f"rank {rank}: skipped {skipped}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

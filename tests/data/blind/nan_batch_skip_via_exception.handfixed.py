# verify: ok
"""Every process all-reduces (MIN) whether its batch has usable targets; when any process has
none, all skip the step together."""
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
            loss = None
        usable = torch.tensor([0 if loss is None else 1])
        dist.all_reduce(usable, op=dist.ReduceOp.MIN)
        if not usable.item():
            skipped += 1
            continue
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    print(f"rank {rank}: skipped {skipped}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand-fixed twin of packed_stream_epilogue_reduce.py.

The generator only counts what it drops (in a dict the caller hands it); the count is all-reduced
after the training loop, on every rank, whichever way each rank's loop ended.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F

MAX_TOKENS = 12
BATCH = 2
SHARDS = {  # document lengths in each rank's shard of the corpus
    0: [5, 7, 14, 3, 9, 4, 6, 2],
    1: [8, 3, 13, 6, 5, 11, 2, 7, 4, 9, 3, 6],
}


def planned_batches(lengths):
    return sum(n <= MAX_TOKENS for n in lengths) // BATCH


def packed_batches(lengths, counts):
    pending = []
    for n in lengths:
        if n > MAX_TOKENS:
            counts["dropped"] += 1
            continue
        pending.append(torch.full((MAX_TOKENS,), float(n)))
        if len(pending) == BATCH:
            yield torch.stack(pending)
            pending = []


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(MAX_TOKENS, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    lengths = SHARDS[rank]

    steps = torch.tensor([planned_batches(lengths)])
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)
    counts = {"dropped": 0}
    for step, batch in enumerate(packed_batches(lengths, counts)):
        if step == steps.item():
            break
        loss = F.mse_loss(model(batch).squeeze(1), batch[:, 0] / MAX_TOKENS)
        loss.backward()
        average_gradients(model)
        opt.step()
        opt.zero_grad()

    total = torch.tensor([float(counts["dropped"])])
    dist.all_reduce(total)
    if rank == 0:
        print(f"dropped at least {int(total.item())} over-long documents")
    final = torch.cat([p.detach().flatten() for p in model.parameters()])
    dist.all_reduce(final)
    print(f"rank {rank}: trained {steps.item()} steps, weight checksum {final.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

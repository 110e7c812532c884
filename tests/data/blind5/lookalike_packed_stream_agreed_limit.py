# verify: ok
"""Look-alike of packed_stream_epilogue_reduce.py: correct.

The generator still all-reduces its drop count after its loop, but it is handed the agreed number
of steps and stops itself after that many batches; the trainer never breaks out of it, so every
rank runs the epilogue exactly once.
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


def packed_batches(lengths, limit):
    dropped, pending, produced = 0, [], 0
    for n in lengths:
        if produced == limit:
            break
        if n > MAX_TOKENS:
            dropped += 1
            continue
        pending.append(torch.full((MAX_TOKENS,), float(n)))
        if len(pending) == BATCH:
            yield torch.stack(pending)
            produced += 1
            pending = []
    total = torch.tensor([float(dropped)])
    dist.all_reduce(total)
    if dist.get_rank() == 0:
        print(f"dropped {int(total.item())} over-long documents")


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
    for batch in packed_batches(lengths, limit=steps.item()):
        loss = F.mse_loss(model(batch).squeeze(1), batch[:, 0] / MAX_TOKENS)
        loss.backward()
        average_gradients(model)
        opt.step()
        opt.zero_grad()

    final = torch.cat([p.detach().flatten() for p in model.parameters()])
    dist.all_reduce(final)
    print(f"rank {rank}: trained {steps.item()} steps, weight checksum {final.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

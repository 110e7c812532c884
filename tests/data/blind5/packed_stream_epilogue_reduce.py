# verify: error
"""A generator's epilogue all_reduce that only the rank whose stream ran dry reaches.

Modelled on https://github.com/huggingface/accelerate/pull/4248: the code a loader generator runs
after its loop (there `end()`) does not run when the consumer stops iterating early.

Each rank packs its own documents into batches with `packed_batches()`, a generator that, once its
documents are used up, all-reduces how many it dropped as too long (for one log line). The trainer
agrees on the number of steps first (all_reduce MIN), so the gradient all_reduces pair up, and
leaves its loop with `if step == steps: break`. On the rank with exactly `steps` batches the
generator runs dry first and its epilogue all-reduces; on the rank with more batches the loop
breaks with the generator suspended at `yield`, so its epilogue never runs.
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


def packed_batches(lengths):
    dropped, pending = 0, []
    for n in lengths:
        if n > MAX_TOKENS:
            dropped += 1
            continue
        pending.append(torch.full((MAX_TOKENS,), float(n)))
        if len(pending) == BATCH:
            yield torch.stack(pending)
            pending = []
    total = torch.tensor([float(dropped)])
    dist.all_reduce(total)  # expect: BCL005
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
    for step, batch in enumerate(packed_batches(lengths)):
        if step == steps.item():
            break
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

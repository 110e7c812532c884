# verify: ok
"""Looks like iterating each process's own packed batches, but the number of steps is agreed first
(all_reduce MIN of the batch counts) and every process takes exactly that many."""
import itertools

import torch
import torch.distributed as dist

SEQ_LEN = 8
ROWS = 2


def pack(samples, seq_len=SEQ_LEN, rows=ROWS):
    stream = torch.cat(samples)
    per_batch = seq_len * rows
    return [stream[s:s + per_batch].view(rows, seq_len) for s in range(0, len(stream) - per_batch + 1, per_batch)]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(10 + rank)
    samples = [torch.randint(0, 5, (int(n),)) for n in torch.randint(3, 14, (12,), generator=g)]
    torch.manual_seed(0)
    model = torch.nn.Linear(SEQ_LEN, 1)
    batches = pack(samples)
    steps = torch.tensor([len(batches)])
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)
    total = torch.zeros(2)
    with torch.no_grad():
        for batch in itertools.islice(batches, int(steps.item())):
            loss = model(batch.float()).pow(2).mean()
            total += torch.stack([loss, torch.tensor(1.0)])
            dist.all_reduce(total)
    print(f"rank {rank}: {int(steps.item())} steps, val {(total[0] / total[1]).item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

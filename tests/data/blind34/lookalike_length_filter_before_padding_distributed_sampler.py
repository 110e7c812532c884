# verify: ok
"""Over-long sequences filtered out on every process, then a padding DistributedSampler.

Looks like length_filter_after_rank_shard_static_batches: a per-process list of kept rows
whose length is odd (29 rows for 2 processes) feeds the batches. But every process filters the
whole corpus alike, and `DistributedSampler(drop_last=False)` pads the 29 rows to 30 by
repeating one, so each process gets 15 rows and 4 batches (the last of 3 rows).
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, DistributedSampler

VOCAB = 40
MAX_LEN = 16
BATCH = 4


def corpus():
    g = torch.Generator().manual_seed(5)
    lengths = torch.randint(4, 25, (40,), generator=g).tolist()
    return [torch.randint(0, VOCAB, (n,), generator=g) for n in lengths]


def pad(rows):
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True)


def main():
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=2)
    fabric.launch()

    kept = [row for row in corpus() if len(row) <= MAX_LEN]
    sampler = DistributedSampler(kept, fabric.world_size, fabric.global_rank, shuffle=False, drop_last=False)
    batches = DataLoader(kept, batch_size=BATCH, sampler=sampler, collate_fn=pad)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 8), torch.nn.Linear(8, VOCAB))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = fabric.setup(model, opt)

    for tokens in batches:
        logits = model(tokens)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
    print(f"rank {fabric.global_rank}: kept {len(kept)}, {len(batches)} steps")
    fabric.barrier()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix: the length filter runs on the whole corpus, before sharding, cut to whole rounds.

Every process filters the same corpus alike, keeps a multiple of the world size and takes
every second row of it, so both shards have the same length and the same number of batches.

Broken version's docstring follows.

Over-long sequences filtered out after the corpus is sharded by rank, then static batches.

Modelled on https://github.com/facebookresearch/fairseq2/pull/680 ("the bug caused by sequence
length filtering that happens after sharding during data reading. Filtering causes the number
of examples to differ between ranks, but static batching ignores this"). Each Fabric process
takes every second sequence of the corpus, drops the ones longer than MAX_LEN and cuts the
rest into batches of 4. The long sequences are not spread evenly over the two shards, so one
process has a batch more than the other and runs a DDP backward that nobody matches. What
parts the processes: the lengths of the sequences in each process's own shard.
"""
import torch
from lightning.fabric import Fabric

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

    rows = [row for row in corpus() if len(row) <= MAX_LEN]
    rows = rows[: len(rows) - len(rows) % fabric.world_size]
    shard = kept = rows[fabric.global_rank :: fabric.world_size]
    batches = [pad(kept[i : i + BATCH]) for i in range(0, len(kept) - BATCH + 1, BATCH)]

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
    print(f"rank {fabric.global_rank}: kept {len(kept)} of {len(shard)}, {len(batches)} steps")
    fabric.barrier()


if __name__ == "__main__":
    main()

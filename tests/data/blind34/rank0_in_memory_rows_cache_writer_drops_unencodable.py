# verify: hang,error
"""Rank 0 preprocesses and caches the dataset, keeps its in-memory copy; the others load the cache.

Modelled on https://github.com/snowflakedb/ArcticTraining/issues/97 (building the data cache
on the main process and having every replica read that cache; the cache path "drops too many
records", so one process ends up with a different, here shorter, dataset). Rank 0 builds the
rows and writes them to an ASCII JSON-lines cache, skipping the rows the encoder refuses
(accented captions); it goes on training from the rows it already holds, while rank 1 waits at
the barrier and then reads the cache. `DistributedSampler` sizes each process's share from its
own dataset length (40 rows against 30), so rank 0 gets 5 batches and rank 1 4, and rank 0's
fifth DDP backward has no partner. What parts the processes: a rank test (who builds the
cache) and an exception from encoding rows that only the cache reader loses.
"""
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

WORDS = ["river", "stone", "cafe", "café", "naive", "naïve", "forest", "crème"]
VOCAB = 64
LENGTH = 8


def cache_path():
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return os.path.join(tempfile.gettempdir(), f"blind34-{tag}-cache", "rows.jsonl")


def build_rows():
    g = torch.Generator().manual_seed(2)
    picks = torch.randint(0, len(WORDS), (120, 2), generator=g).tolist()
    rows = [{"text": f"{WORDS[a]} {WORDS[b]}", "label": (a + b) % 2} for a, b in picks]
    ascii_rows = [r for r in rows if r["text"].isascii()]
    return ascii_rows[:30] + [r for r in rows if not r["text"].isascii()][:10]


def save_cache(rows, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="ascii") as f:
        for row in rows:
            try:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            except UnicodeEncodeError:
                print(f"skipping unencodable row {row['text']!r}")


def load_cache(path):
    with open(path, encoding="ascii") as f:
        return [json.loads(line) for line in f]


def encode(rows):
    ids = torch.zeros(len(rows), LENGTH, dtype=torch.long)
    for i, row in enumerate(rows):
        codes = [ord(c) % VOCAB for c in row["text"][:LENGTH]]
        ids[i, : len(codes)] = torch.tensor(codes)
    return ids, torch.tensor([row["label"] for row in rows])


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    path = cache_path()
    if rank == 0:
        rows = build_rows()
        save_cache(rows, path)
    dist.barrier()
    if rank != 0:
        rows = load_cache(path)

    ids, labels = encode(rows)
    dataset = torch.utils.data.TensorDataset(ids, labels)
    sampler = DistributedSampler(dataset, world, rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)

    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.EmbeddingBag(VOCAB, 8), torch.nn.Linear(8, 2)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()  # expect: BCL011
        opt.step()
        steps += 1
    print(f"rank {rank}: {len(rows)} rows, {steps} steps")

    dist.barrier()
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

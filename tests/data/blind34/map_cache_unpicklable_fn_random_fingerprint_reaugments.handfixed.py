# verify: ok
"""Hand fix: the cache is named after the preprocessing configuration, as in diffusers#4188.

Every process computes the same fingerprint, so the processes after the main one load the
rows it augmented and cached, and all of them train on one set of rows.

Broken version's docstring follows.

A cached map whose fingerprint falls back to a random hash, under main_process_first.

Modelled on https://github.com/huggingface/diffusers/pull/4188 (follow-up of
https://github.com/huggingface/diffusers/pull/4038: `train_dataset.map(...)` inside
`accelerator.main_process_first()` only helps if the other processes find the main process's
cache, which needs a fingerprint that every process computes alike; the fix passes
`new_fingerprint=Hasher.hash(args)`). Here `cached_map` names its cache file after a hash of the
pickled function and falls back to a random hash when the function cannot be pickled (a
closure), as datasets does. The main process augments and caches; the other process computes
another random name, misses the cache and augments again with its own random state (seeded
per process for augmentation diversity), so it keeps a different number of rows under the
length limit, gets a different number of batches from the prepared loader, and runs a DDP
step the main process never joins. What parts the processes: a file name (a random
fingerprint) and the rows that a per-process random augmentation keeps.
"""
import hashlib
import os
import pickle
import random
import shutil
import tempfile
import uuid

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

VOCAB = 50
MAX_LEN = 10


def cache_dir():
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return os.path.join(tempfile.gettempdir(), f"blind34-{tag}-map-cache")


def raw_rows():
    g = torch.Generator().manual_seed(11)
    return [torch.randint(1, VOCAB, (int(n),), generator=g).tolist() for n in torch.randint(4, 11, (40,), generator=g)]


def fingerprint(fn, rows):
    try:
        blob = pickle.dumps((fn, rows))
    except (pickle.PicklingError, AttributeError, TypeError):
        print("Parameter 'function' couldn't be hashed properly, a random hash was used instead.")
        return uuid.uuid4().hex[:16]
    return hashlib.sha256(blob).hexdigest()[:16]


def cached_map(rows, fn, directory, new_fingerprint=None):
    name = new_fingerprint or fingerprint(fn, rows)
    path = os.path.join(directory, f"cache-{name}.pt")
    if os.path.exists(path):
        return torch.load(path)
    mapped = [out for out in map(fn, rows) if out is not None]
    os.makedirs(directory, exist_ok=True)
    torch.save(mapped, path)
    return mapped


def make_augment(max_len, rng):
    def augment(row):
        span = [rng.randrange(1, VOCAB) for _ in range(rng.randrange(0, 5))]
        at = rng.randrange(0, len(row) + 1)
        out = row[:at] + span + row[at:]
        return out if len(out) <= max_len else None

    return augment


def pad(rows):
    return torch.nn.utils.rnn.pad_sequence([torch.tensor(r) for r in rows], batch_first=True)


def main():
    accelerator = Accelerator(cpu=True)
    rng = random.Random(1000 + accelerator.process_index)  # augmentation differs per process
    with accelerator.main_process_first():
        config = pickle.dumps({"augment": "random-span", "max_len": MAX_LEN, "rows": raw_rows()})
        new_fingerprint = hashlib.sha256(config).hexdigest()[:16]
        rows = cached_map(raw_rows(), make_augment(MAX_LEN, rng), cache_dir(), new_fingerprint)

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 8), torch.nn.Linear(8, VOCAB))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(rows, batch_size=4, collate_fn=pad)
    model, opt, loader = accelerator.prepare(model, opt, loader)

    steps = 0
    for tokens in loader:
        logits = model(tokens)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        steps += 1
    print(f"process {accelerator.process_index}: {len(rows)} rows, {steps} steps")

    accelerator.wait_for_everyone()
    shutil.rmtree(cache_dir(), ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()

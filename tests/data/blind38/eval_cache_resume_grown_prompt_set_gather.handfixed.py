# verify: ok
"""Hand fix: cached prompts are read from disk, not skipped, so every process gathers once per prompt.

Modelled on EleutherAI/lm-evaluation-harness#2548
(https://github.com/EleutherAI/lm-evaluation-harness/issues/2548): with `--use_cache` finished
samples are skipped on resumption, and the cache is only safe with the same sharding. Here a
smoke run caches the first four prompts; the full run shards twelve prompts in blocks, and each
process generates only the prompts it does not find on disk. Process 0 finds four of its six,
process 1 none of its six, so process 0 leaves the loop of per-prompt gathers four rounds early.
"""
import hashlib
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist

VOCAB, EOS, PAD, MAX_NEW = 13, 0, -1, 6
CACHE = os.path.join(
    tempfile.gettempdir(), f"blind38-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-cache"
)


def prompts(n):
    return [[(3 * i + j) % (VOCAB - 1) + 1 for j in range(2 + i % 3)] for i in range(n)]


def cache_file(prompt):
    return os.path.join(CACHE, hashlib.sha1(json.dumps(prompt).encode()).hexdigest() + ".json")


@torch.no_grad()
def generate(model, prompt):
    ids = list(prompt)
    for _ in range(MAX_NEW):
        nxt = int(model(torch.tensor(ids[-1:])).argmax())
        ids.append(nxt)
        if nxt == EOS:
            break
    return ids[len(prompt):]


def run_eval(model, all_prompts, rank, world):
    per = len(all_prompts) // world
    mine = all_prompts[rank * per:(rank + 1) * per]
    todo = [p for p in mine if not os.path.exists(cache_file(p))]
    for prompt in mine:
        if prompt in todo:
            out = torch.tensor(generate(model, prompt))
        else:
            with open(cache_file(prompt)) as f:
                out = torch.tensor(json.load(f), dtype=torch.long)
        n = torch.tensor([len(out)])
        lens = [torch.zeros_like(n) for _ in range(world)]
        dist.all_gather(lens, n)
        width = int(torch.stack(lens).max())
        padded = torch.cat([out, torch.full((width - len(out),), PAD)])
        rows = [torch.zeros_like(padded) for _ in range(world)]
        dist.all_gather(rows, padded)
        with open(cache_file(prompt), "w") as f:
            json.dump(out.tolist(), f)
    return len(todo)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    os.makedirs(CACHE, exist_ok=True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 8), torch.nn.Linear(8, VOCAB))
    run_eval(model, prompts(12)[:4], rank, world)  # smoke run
    dist.barrier()
    done = run_eval(model, prompts(12), rank, world)  # full run
    print(f"process {rank}: generated {done} prompts")
    dist.barrier()
    shutil.rmtree(CACHE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

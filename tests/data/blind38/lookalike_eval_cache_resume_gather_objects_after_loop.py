# verify: ok
"""Look-alike: the on-disk cache skips prompts, but the variable-length results are gathered once.

Each process generates only the prompts it does not find on disk (four of six skipped on process
0, none on process 1), collects its outputs in a list, and after the loop every process makes the
same single `all_gather_object`, whose pickled objects may differ in size.
"""
import hashlib
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist

VOCAB, EOS, MAX_NEW = 13, 0, 6
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
    outputs = []
    for prompt in todo:
        out = generate(model, prompt)
        outputs.append(out)
        with open(cache_file(prompt), "w") as f:
            json.dump(out, f)
    everyone = [None] * world
    dist.all_gather_object(everyone, outputs)
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

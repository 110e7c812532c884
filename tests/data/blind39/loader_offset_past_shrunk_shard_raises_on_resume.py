# verify: error,hang
"""Restore each process's loader position after the data set was deduplicated between runs.

Modelled on https://github.com/pytorch/torchtitan/issues/3065 ("DCP load hang forever without
error at scale": the checkpoint loaded, then the data loader's `load_state_dict` raised on some
ranks and the job hung instead of failing). Here the previous run consumed 5 batches on every
process (6 records each, cycled). Before the restart the three duplicate records were dropped:
process 0's stripe keeps 5 records, process 1's 4. `ShardLoader.load_state_dict` rejects an
offset past the end of the shard, so process 1 raises while process 0 starts training and waits
in the first gradient all-reduce.
"""
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist

STEPS = 4


def run_dir():
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    return os.path.join(tempfile.gettempdir(), f"blind39-{addr}-{port}-loader")


class ShardLoader:
    def __init__(self, records, rank, world_size):
        self.shard = records[rank::world_size]
        self.offset = 0

    def state_dict(self):
        return {"offset": self.offset}

    def load_state_dict(self, state):
        if state["offset"] > len(self.shard):
            raise ValueError(f"saved offset {state['offset']} is past a shard of {len(self.shard)}")
        self.offset = state["offset"]

    def __next__(self):
        record = self.shard[self.offset % len(self.shard)]
        self.offset += 1
        return record


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    root = run_dir()
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, f"loader-{rank}.json"), "w") as f:
        json.dump({"offset": 5}, f)  # what the previous run saved on every process

    raw = [0, 1, 2, 3, 4, 3, 5, 6, 5, 7, 8, 7]
    records = [r for i, r in enumerate(raw) if r not in raw[:i]]
    loader = ShardLoader(records, rank, world_size)
    with open(os.path.join(root, f"loader-{rank}.json")) as f:
        loader.load_state_dict(json.load(f))

    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(STEPS):
        value = float(next(loader))
        x, y = torch.tensor([[value]]), torch.tensor([[2.0 * value]])
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)  # expect: BCL005
            p.grad /= world_size
        opt.step()

    dist.barrier()
    shutil.rmtree(root, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

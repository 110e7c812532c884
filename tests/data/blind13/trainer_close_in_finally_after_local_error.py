# verify: error
"""A `finally:` that closes the trainer runs its collective on the process that raised.

Modelled on pytorch/torchtitan#1342 (https://github.com/pytorch/torchtitan/pull/1342): "If we
perform the destroy_process_group when some trainers have exceptions while others are doing
collectives, the cleanup itself will cause deadlock", where `finally: trainer.close()` ran on the
failing trainer only. Here `Trainer.close()` all-reduces the number of records seen, to print the
run's total. One record of the second process's share is truncated JSON; `json.loads` raises
there in the middle of a step, its `finally:` enters `close()`'s all-reduce, while the other process
is in that step's gradient all-reduce.
"""
import json
import os

import torch
import torch.distributed as dist

RECORDS = [
    '{"x": [0.1, 0.2, 0.3, 0.4], "y": 1.0}',
    '{"x": [0.5, 0.1, 0.0, 0.2], "y": 0.0}',
    '{"x": [0.3, 0.3, 0.1, 0.9], "y": 1.0}',
    '{"x": [0.2, 0.8, 0.4, 0.1], "y": 0.',
    '{"x": [0.7, 0.6, 0.5, 0.4], "y": 1.0}',
    '{"x": [0.9, 0.0, 0.2, 0.3], "y": 0.0}',
]


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.seen = torch.zeros(1)

    def step(self, line):
        record = json.loads(line)
        x = torch.tensor(record["x"]).unsqueeze(0)
        y = torch.tensor([[record["y"]]])
        self.optimizer.zero_grad()
        torch.nn.functional.mse_loss(self.model(x), y).backward()
        for p in self.model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        self.optimizer.step()
        self.seen += 1

    def close(self):
        dist.all_reduce(self.seen)
        if dist.get_rank() == 0:
            print(f"records seen: {int(self.seen.item())}")


def main():
    dist.init_process_group("gloo")
    mine = RECORDS[dist.get_rank()::dist.get_world_size()]
    trainer = Trainer()
    try:
        for line in mine:
            trainer.step(line)
    finally:
        trainer.close()  # expect: BCL005
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()

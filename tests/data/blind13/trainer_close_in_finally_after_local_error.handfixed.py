# verify: ok
"""Hand-fixed: a record that does not parse is skipped by every process together, and the trainer
is closed only after the loop has ended normally (as pytorch/torchtitan#1342 moved `close()` out of
`finally:`).

Each step all-reduces a "parsed" flag before its gradient all-reduce; the step runs where every
process parsed its record.
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
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        parsed = torch.tensor([0.0 if record is None else 1.0])
        dist.all_reduce(parsed, op=dist.ReduceOp.MIN)
        if parsed.item() == 0.0:
            return
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
    for line in mine:
        trainer.step(line)
    trainer.close()
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()

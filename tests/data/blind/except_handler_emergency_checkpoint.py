# verify: hang
"""The training loop is wrapped in try/except: on an error the process writes an emergency
checkpoint (whose file name is agreed with `broadcast_object_list`) and re-raises. Rank 1 hits a
malformed batch and goes into the handler, so its broadcast meets rank 0's next gradient
all_reduce instead.

Modelled on Lightning-AI/pytorch-lightning#6430 "Expected behavior when 1 rank crashes in
distributed training?" (https://github.com/Lightning-AI/pytorch-lightning/issues/6430): the rank
that raised goes through the checkpointing flow and hangs broadcasting the file name, hiding the
original error.
"""
import os
import tempfile

import torch
import torch.distributed as dist


class Runner:
    def __init__(self):
        self.rank = dist.get_rank()
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def batches(self):
        for i in range(4):
            width = 3 if (self.rank == 1 and i == 2) else 4  # a malformed record on rank 1
            yield torch.randn(6, width)

    def emergency_checkpoint(self):
        name = [f"emergency-step{self.step}.pt" if self.rank == 0 else None]
        dist.broadcast_object_list(name, src=0)
        if self.rank == 0:
            torch.save(self.model.state_dict(), os.path.join(tempfile.gettempdir(), name[0]))

    def train(self):
        for x in self.batches():
            self.opt.zero_grad()
            self.model(x).pow(2).mean().backward()
            for p in self.model.parameters():
                dist.all_reduce(p.grad)
            self.opt.step()
            self.step += 1

    def run(self):
        try:
            self.train()
        except RuntimeError:
            self.emergency_checkpoint()  # expect: BCL005
            raise


def main():
    dist.init_process_group("gloo")
    Runner().run()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

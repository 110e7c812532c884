# verify: ok
"""Each step the processes agree (all_reduce MIN of an ok flag) whether every batch went through
forward and backward; when one did not, every process writes the emergency checkpoint together
and stops."""
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
            try:
                self.model(x).pow(2).mean().backward()
                ok = torch.tensor([1])
            except RuntimeError as err:
                print(f"rank {self.rank}: bad batch: {err}")
                ok = torch.tensor([0])
            dist.all_reduce(ok, op=dist.ReduceOp.MIN)
            if not ok.item():
                return False
            for p in self.model.parameters():
                dist.all_reduce(p.grad)
            self.opt.step()
            self.step += 1
        return True

    def run(self):
        if not self.train():
            self.emergency_checkpoint()
            print(f"rank {self.rank}: stopped after an emergency checkpoint")


def main():
    dist.init_process_group("gloo")
    Runner().run()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

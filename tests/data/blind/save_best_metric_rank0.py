# verify: hang
"""A best-checkpoint hook: the evaluator returns its metrics on the main process only (an empty
dict elsewhere), and the hook returns early when the metric is missing. The checkpointer's `save`
consolidates the parameters with a broadcast before the main process writes the file, so only the
main process reaches that broadcast, and the other process waits at the end-of-epoch barrier.

Modelled on Oneflow-Inc/libai#172 "fix save best model bug"
(https://github.com/Oneflow-Inc/libai/pull/172): only rank 0 had the eval results, so only rank 0
entered the save function and the run hung.
"""
import os
import tempfile

import torch
import torch.distributed as dist


class Checkpointer:
    def __init__(self, model, directory):
        self.model = model
        self.directory = directory

    def save(self, name):
        for p in self.model.parameters():
            dist.broadcast(p.data, src=0)
        if dist.get_rank() == 0:
            torch.save(self.model.state_dict(), os.path.join(self.directory, name + ".pt"))


class BestCheckpointHook:
    def __init__(self, checkpointer, metric="val_loss"):
        self.checkpointer = checkpointer
        self.metric = metric
        self.best = None

    def after_eval(self, metrics):
        latest = metrics.get(self.metric)
        if latest is None:
            return  # not computed on this process
        if self.best is None or latest < self.best:
            self.best = latest
            self.checkpointer.save("model_best")  # expect: BCL005


def evaluate(model, rank):
    if rank != 0:
        return {}
    with torch.no_grad():
        x = torch.linspace(-1, 1, 16).unsqueeze(1)
        return {"val_loss": (model(x) - 2 * x).pow(2).mean().item()}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hook = BestCheckpointHook(Checkpointer(model, tempfile.gettempdir()))
    for epoch in range(2):
        x = torch.randn(8, 1)
        opt.zero_grad()
        (model(x) - 2 * x).pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        hook.after_eval(evaluate(model, rank))
        dist.barrier()
    print(f"rank {rank}: best {hook.best}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

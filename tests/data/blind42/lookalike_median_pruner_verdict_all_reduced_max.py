# verify: ok
"""Look-alike: hyperparameter trials with a median pruner fed by each process's own validation
accuracy, where `report` raises `TrialPruned` and the trial loop catches it, as in a pruning bug;
but `report` first turns this process's verdict into a flag and all-reduces it with `MAX`, so
every process raises in the same epoch of the same trial (a trial is pruned when any process's
shard says so), and the gradient all-reduces stay paired.
"""
import statistics

import torch
import torch.distributed as dist

TRIAL_LRS = [0.5, 0.05, 0.3]
EPOCHS = 4
MARGIN = [0.5, 4.0]  # the second shard's validation set is easy


class TrialPruned(Exception):
    pass


class MedianPruner:
    def __init__(self, warmup_epochs=1):
        self.warmup_epochs = warmup_epochs
        self.finished = {}
        self.current = {}

    def report(self, epoch, value):
        self.current[epoch] = value
        done = self.finished.get(epoch, [])
        verdict = epoch >= self.warmup_epochs and bool(done) and value < statistics.median(done)
        flag = torch.tensor([float(verdict)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() > 0:
            raise TrialPruned(f"epoch {epoch}: pruned by at least one process")

    def complete(self):
        for epoch, value in self.current.items():
            self.finished.setdefault(epoch, []).append(value)
        self.current = {}


def make_split(shard, seed, n):
    g = torch.Generator().manual_seed(seed + shard)
    y = torch.randint(0, 2, (n,), generator=g)
    x = torch.randn(n, 4, generator=g)
    x[:, 0] += (2 * y - 1) * MARGIN[shard % 2]
    return x, y.float()


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def run_trial(lr, train, val, pruner):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(EPOCHS):
        for xb, yb in zip(train[0].split(32), train[1].split(32)):
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb)
            opt.zero_grad()
            loss.backward()
            average_gradients(model)
            opt.step()
        with torch.no_grad():
            acc = ((model(val[0]).squeeze(1) > 0).float() == val[1]).float().mean().item()
        pruner.report(epoch, acc)
    return acc


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    train, val = make_split(rank, 10, 256), make_split(rank, 20, 64)
    pruner, results = MedianPruner(), {}
    for lr in TRIAL_LRS:
        try:
            results[lr] = run_trial(lr, train, val, pruner)
            pruner.complete()
        except TrialPruned as exc:
            print(f"process {rank}: trial lr={lr} pruned ({exc})")
            pruner.current = {}
            continue
    print(f"process {rank}: best lr {max(results, key=results.get)}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

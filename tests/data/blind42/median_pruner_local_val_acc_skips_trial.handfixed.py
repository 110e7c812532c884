# verify: ok
"""Hand fix of median_pruner_local_val_acc_skips_trial: the validation accuracy is counted over
every process's shard (`all_reduce` of `[correct, total]`) before it is reported, so the pruner
sees the same value everywhere, and every process prunes the same trials at the same epoch.

Modelled on https://github.com/optuna/optuna/issues/2726.
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
        if epoch >= self.warmup_epochs and done and value < statistics.median(done):
            raise TrialPruned(f"epoch {epoch}: {value:.3f} < median {statistics.median(done):.3f}")

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
            correct = ((model(val[0]).squeeze(1) > 0).float() == val[1]).float().sum()
        counts = torch.stack([correct, torch.tensor(float(len(val[1])))])
        dist.all_reduce(counts)
        acc = (counts[0] / counts[1]).item()
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

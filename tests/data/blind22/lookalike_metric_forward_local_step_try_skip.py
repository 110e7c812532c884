# verify: ok
"""Look-alike: the same try/except that skips the batches torchmetrics rejects, with the metric's
default `dist_sync_on_step=False`.

A step's `metric(preds, target)` then computes this process's batch value without a collective;
the only gather is the final `metric.compute()`, which every process calls once. Process 1
skips the batch that raises and nothing else changes.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torchmetrics.classification import MulticlassAccuracy

torch.manual_seed(0)
FEATURES = torch.randn(32, 6)
LABELS = torch.randint(0, 3, (32,))
LABELS[[5, 11]] = -1  # unlabelled rows; index 5 and 11 go to process 1


def evaluate(model, loader):
    metric = MulticlassAccuracy(num_classes=3)
    step_scores, skipped = [], 0
    with torch.no_grad():
        for x, y in loader:
            preds = model(x).argmax(-1)
            try:
                step_scores.append(metric(preds, y).item())
            except RuntimeError as err:
                skipped += 1
                print(f"skipping batch: {err}")
    return metric.compute().item(), step_scores, skipped


def main():
    dist.init_process_group("gloo")
    model = nn.Linear(6, 3)
    sampler = DistributedSampler(TensorDataset(FEATURES, LABELS), shuffle=False)
    loader = DataLoader(TensorDataset(FEATURES, LABELS), batch_size=4, sampler=sampler)
    acc, steps, skipped = evaluate(model, loader)
    print(f"rank {dist.get_rank()}: accuracy {acc:.3f} over {len(steps)} batches, {skipped} skipped")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

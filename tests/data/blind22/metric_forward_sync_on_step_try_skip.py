# verify: hang,error
"""A metric synchronised on every step, called inside a try/except that skips batches it rejects.

Modelled on https://github.com/ludwig-ai/ludwig/pull/3562 (each metric update wrapped in
try/except, "Ran into error when calculating metric ... Skipping"). The accuracy metric is built
with `dist_sync_on_step=True`, so each call `metric(preds, target)` runs `update` and then a
`compute` that gathers the states of every process. Some evaluation rows are unlabelled (`-1`);
torchmetrics' input validation (more distinct target values than classes) raises inside `update`,
before the gather, on process 1's first batch (0, 1, -1, 2); process 0 makes one more sync.
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
    metric = MulticlassAccuracy(num_classes=3, dist_sync_on_step=True)
    step_scores, skipped = [], 0
    with torch.no_grad():
        for x, y in loader:
            preds = model(x).argmax(-1)
            try:
                step_scores.append(metric(preds, y).item())  # expect: BCL011
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

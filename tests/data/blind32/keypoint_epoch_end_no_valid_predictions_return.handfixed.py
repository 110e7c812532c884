# verify: ok
"""Hand fix: every process joins the all-reduce; a shard without valid predictions adds zeros.

Modelled on https://github.com/talmolab/sleap/issues/2849 ("No valid predictions for epoch-end
evaluation (all predictions may be empty or NaN)"). Predictions below the confidence threshold
are NaN; `epoch_end_metrics` drops them and returns None when nothing is left, before the
`fabric.all_reduce` that sums the errors. Every low-confidence frame lies at an odd position of
the validation set, so process 1's shard has no valid prediction: process 0 waits in the
all-reduce alone.
"""
import lightning as L
import torch

NAN = float("nan")


def validation_frames():
    g = torch.Generator().manual_seed(0)
    truth = torch.rand(12, 2, generator=g)
    conf = torch.tensor([0.9, 0.2] * 6)  # the animal is occluded in every odd frame
    return truth, conf


def predict(model, truth, conf):
    xy = model(truth)
    return torch.where((conf > 0.5).unsqueeze(1), xy, torch.full_like(xy, NAN))


def epoch_end_metrics(fabric, preds, truth):
    valid = ~torch.isnan(preds).any(dim=1)
    err = (preds[valid] - truth[valid]).norm(dim=1)  # empty where nothing is valid: sum() is 0
    totals = fabric.all_reduce(torch.stack([err.sum(), valid.sum().float()]), reduce_op="sum")
    if totals[1] == 0:
        return None
    return (totals[0] / totals[1]).item()


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = fabric.setup(torch.nn.Linear(2, 2))
    truth, conf = validation_frames()
    mine = slice(fabric.global_rank, None, fabric.world_size)
    with torch.no_grad():
        preds = predict(model, truth[mine], conf[mine])
    px_error = epoch_end_metrics(fabric, preds, truth[mine])
    fabric.print(f"mean keypoint error {px_error}")
    fabric.barrier()


if __name__ == "__main__":
    main()

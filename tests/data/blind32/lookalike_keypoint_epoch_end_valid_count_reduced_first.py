# verify: ok
"""Look-alike: the helper returns early when no prediction is valid, but counts them globally first.

The valid predictions are summed over the processes with `fabric.all_reduce` before the test, so
the early return is taken by every process or by none (after
https://github.com/talmolab/sleap/issues/2849). Process 1's shard still has no valid prediction.
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
    n_valid = fabric.all_reduce(valid.sum().float(), reduce_op="sum")
    if n_valid == 0:
        print(f"process {fabric.global_rank}: no valid predictions for epoch-end evaluation")
        return None
    err = (preds[valid] - truth[valid]).norm(dim=1)
    total = fabric.all_reduce(err.sum(), reduce_op="sum")
    return (total / n_valid).item()


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

# verify: ok
"""Only rank 0 builds a metrics writer; the epoch-end hook returns early where it is None,
and the metric it writes synchronises across ranks when computed.

Modelled on https://github.com/Emerge-Lab/PufferDrive/pull/468 ("only rank 0 builds the logger;
other ranks keep `logger=None`") and https://github.com/Lightning-AI/pytorch-lightning/issues/19604
(`metric.compute` in `on_train_epoch_end`: "training appears to end up in a deadlock").
"""
import io
import json

import torch
import torch.distributed as dist


class MeanMetric:
    """Running mean, reduced over all ranks on compute()."""

    def __init__(self):
        self.total = torch.zeros(2)

    def update(self, values: torch.Tensor):
        self.total += torch.stack([values.sum(), torch.tensor(float(values.numel()))])

    def compute(self) -> float:
        synced = self.total.clone()
        dist.all_reduce(synced)
        return (synced[0] / synced[1]).item()


class JsonlWriter:
    def __init__(self, stream):
        self.stream = stream

    def add_scalar(self, tag, value, step):
        self.stream.write(json.dumps({"tag": tag, "value": value, "step": step}) + "\n")


class Trainer:
    def __init__(self):
        self.metric = MeanMetric()
        self.writer = JsonlWriter(io.StringIO()) if dist.get_rank() == 0 else None

    def on_epoch_end(self, epoch):
        acc = self.metric.compute()  # every rank takes part in the reduction
        if self.writer is None:
            return
        self.writer.add_scalar("train/acc", acc, epoch)

    def fit(self, epochs=2):
        for epoch in range(epochs):
            for _ in range(3):
                self.metric.update(torch.rand(4).round())
            self.on_epoch_end(epoch)
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    Trainer().fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

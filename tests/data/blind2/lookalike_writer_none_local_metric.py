# verify: ok
"""Like `writer_none_metric_compute`: only rank 0 has a writer and the epoch-end hook returns early
elsewhere; but the hook writes a local value, and the cross-rank reduction runs in `fit()` on every
rank.
"""
import io
import json

import torch
import torch.distributed as dist


class JsonlWriter:
    def __init__(self, stream):
        self.stream = stream

    def add_scalar(self, tag, value, step):
        self.stream.write(json.dumps({"tag": tag, "value": value, "step": step}) + "\n")


class Trainer:
    def __init__(self):
        self.writer = JsonlWriter(io.StringIO()) if dist.get_rank() == 0 else None
        self.epoch_acc = 0.0

    def on_epoch_end(self, epoch):
        if self.writer is None:
            return
        self.writer.add_scalar("train/acc", self.epoch_acc, epoch)

    def fit(self, epochs=2):
        for epoch in range(epochs):
            totals = torch.zeros(2)
            for _ in range(3):
                hits = torch.rand(4).round()
                totals += torch.stack([hits.sum(), torch.tensor(float(hits.numel()))])
            dist.all_reduce(totals)
            self.epoch_acc = (totals[0] / totals[1]).item()
            self.on_epoch_end(epoch)
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    Trainer().fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

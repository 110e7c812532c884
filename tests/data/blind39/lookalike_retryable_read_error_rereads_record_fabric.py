# verify: ok
"""Look-alike: a retryable read error is retried in place after a back-off (Fabric).

Modelled on https://github.com/meta-pytorch/torchrec/pull/4294 ("catch inner exception to handle
data loading gracefully": an exception marked `is_retryable` makes the data-loading thread log a
warning and skip the batch). Record 5 is still being flushed by the preprocessing job when it is
first read: that read raises `TornRecordError`, which is retryable, and the reader sleeps and
reads the same record again, which then succeeds. No batch is dropped, so every process runs the
same number of `fabric.backward` calls.
"""
import time

import torch
from lightning.fabric import Fabric

RECORDS = [{"x": [float(i), 1.0], "y": 2.0 * i} for i in range(16)]
RECORDS[5] = dict(RECORDS[5], flushing=True)
BATCH = 2


class TornRecordError(OSError):
    is_retryable = True


def read(record):
    if record.pop("flushing", False):
        raise TornRecordError("record ends before its payload")
    return torch.tensor(record["x"]), torch.tensor([record["y"]])


def read_with_retry(record, attempts=3):
    for attempt in range(attempts):
        try:
            return read(record)
        except Exception as err:
            if not getattr(err, "is_retryable", False) or attempt == attempts - 1:
                raise
            print(f"retrying a record after: {err}")
            time.sleep(0.05 * 2**attempt)


def batches(shard):
    for start in range(0, len(shard), BATCH):
        pairs = [read_with_retry(r) for r in shard[start:start + BATCH]]
        yield torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    model, opt = fabric.setup(model, opt)

    shard = RECORDS[fabric.global_rank::fabric.world_size]
    for x, y in batches(shard):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        fabric.backward(loss)
        opt.step()
    fabric.barrier()
    fabric.print("done")


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix: a retryable read error drops only the torn record; its batch still runs (Fabric).

Modelled on https://github.com/meta-pytorch/torchrec/pull/4294 ("catch inner exception to handle
data loading gracefully": an exception marked `is_retryable` makes the data-loading thread log a
warning and skip the batch). Record 5 of the data set is a torn write from a preempted
preprocessing job: reading it raises `TornRecordError`, which is retryable. Only that record is
left out, so process 1's batch holds one record instead of two and every process runs the same
number of `fabric.backward` calls.
"""
import torch
from lightning.fabric import Fabric

RECORDS = [{"x": [float(i), 1.0], "y": 2.0 * i} for i in range(16)]
RECORDS[5] = {"x": None, "y": None}
BATCH = 2


class TornRecordError(OSError):
    is_retryable = True


def read(record):
    if record["x"] is None:
        raise TornRecordError("record ends before its payload")
    return torch.tensor(record["x"]), torch.tensor([record["y"]])


def batches(shard):
    for start in range(0, len(shard), BATCH):
        pairs = []
        for record in shard[start:start + BATCH]:
            try:
                pairs.append(read(record))
            except Exception as err:
                if not getattr(err, "is_retryable", False):
                    raise
                print(f"skipping a record at {start}: {err}")
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

# verify: ok
"""Hand fix: the error rate is built with an explicit dtype, float32 on every process.

As vllm-project/speculators#1116 did: `torch.tensor(..., dtype=torch.float32)`, so the value's
Python type (a float or the literal 0) no longer decides the dtype of the reduced tensor.

Original docstring: step metrics whose error-rate entry is a float on one process and the integer
0 on the other.

Modelled on vllm-project/speculators#1116 (https://github.com/vllm-project/speculators/pull/1116):
a metric built as `torch.tensor(1.0 if ... else 0)` without a dtype is float32 where the Python
value is a float and int64 where it is the literal `0`; the metrics are then reduced across ranks
one by one, and the ranks that disagree on the dtype enter the reduction with different byte
counts (HCCL raised there; on gloo the job aborts, on NCCL it may hang or corrupt the sum).

Here a Fabric training loop reads JSON records and counts the malformed ones per batch; the logged
`error_rate` is `n_bad / len(batch) if n_bad else 0`. The malformed records of the first batch all
fall to process 1 (the sampler deals the rows `rank::world`), so at the first logged step process 1
holds a float32 rate and process 0 an int64 zero when `fabric.all_reduce` sums the metrics.
"""
import json

import torch
import torch.nn as nn
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, Dataset

GOOD = '{{"x": [{a}, {b}, {c}], "y": {y}}}'
RAW = [GOOD.format(a=i % 3, b=(i * 2) % 5, c=i % 4, y=(i % 7) / 7) for i in range(16)]
RAW[1] = '{"x": [1, 2, 3], "y": '  # truncated line
RAW[3] = '{"x": [1, 2], "y": 0.5}'  # short feature vector
LOG_EVERY = 2


class JsonLines(Dataset):
    def __len__(self):
        return len(RAW)

    def __getitem__(self, i):
        return RAW[i]


def parse(lines: list[str]):
    xs, ys, bad = [], [], 0
    for line in lines:
        try:
            rec = json.loads(line)
            if len(rec["x"]) != 3:
                raise ValueError("short feature vector")
        except (json.JSONDecodeError, ValueError):
            bad += 1
            continue
        xs.append(rec["x"])
        ys.append(rec["y"])
    return torch.tensor(xs, dtype=torch.float32), torch.tensor(ys, dtype=torch.float32), bad


def step_metrics(loss: torch.Tensor, n_rows: int, n_bad: int) -> dict:
    return {
        "loss": loss.detach().clone(),
        "bad_rows": torch.tensor(n_bad),
        "error_rate": torch.tensor(n_bad / n_rows if n_bad else 0, dtype=torch.float32),
    }


def main() -> None:
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = fabric.setup(model, opt)
    loader = fabric.setup_dataloaders(DataLoader(JsonLines(), batch_size=4, collate_fn=list))

    for step, lines in enumerate(loader):
        x, y, n_bad = parse(lines)
        loss = nn.functional.mse_loss(model(x).squeeze(-1), y)
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
        metrics = step_metrics(loss, len(lines), n_bad)
        if step % LOG_EVERY == 0:
            totals = fabric.all_reduce(metrics, reduce_op="sum")
            fabric.print(f"step {step}: loss {totals['loss'] / fabric.world_size:.4f}, "
                         f"bad rows {int(totals['bad_rows'])}, error rate {float(totals['error_rate']):.3f}")
    fabric.barrier()
    print(f"rank {fabric.global_rank}: done", flush=True)


if __name__ == "__main__":
    main()

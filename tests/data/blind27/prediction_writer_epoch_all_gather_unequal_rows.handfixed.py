# verify: ok
"""Hand fix of prediction_writer_epoch_all_gather_unequal_rows.py: pad to the longest share, then trim.

The writer first all-gathers the row counts, pads its predictions to the largest count, gathers
tensors of one shape, and drops each process's padding afterwards.

Original description: a `BasePredictionWriter` all-gathers each process's concatenated
predictions at the epoch's end.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/5493: gathering the
predictions of every process assumed that all of them had seen the same number of batches and
rows, which a distributed prediction run does not promise.

`trainer.predict` shards the 9 rows without padding (Lightning's unrepeated distributed sampler:
5 rows for process 0, 4 for process 1). `GatheredWriter.write_on_epoch_end`, which Lightning calls
on every process, concatenates this process's predictions and hands them to
`pl_module.all_gather`, whose buckets are shaped like the local tensor: 5 rows against 4.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from lightning.pytorch.callbacks import BasePredictionWriter
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

OUT = os.path.join(
    tempfile.gettempdir(),
    f"blind27-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-predictions",
)


class GatheredWriter(BasePredictionWriter):
    def __init__(self, path):
        super().__init__(write_interval="epoch")
        self.path = path

    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        local = torch.cat(predictions)
        counts = pl_module.all_gather(torch.tensor(len(local)))
        pad = local.new_zeros(int(counts.max()) - len(local), *local.shape[1:])
        everything = pl_module.all_gather(torch.cat([local, pad]))
        everything = torch.cat([everything[i, : int(n)] for i, n in enumerate(counts)])
        if trainer.is_global_zero:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            torch.save(everything, self.path)


class Scorer(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def predict_step(self, batch, batch_idx):
        (x,) = batch
        return torch.sigmoid(self.net(x))


def main():
    torch.manual_seed(0)
    rows = TensorDataset(torch.randn(9, 3))
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", logger=False,
        enable_progress_bar=False, enable_model_summary=False,
        callbacks=[GatheredWriter(os.path.join(OUT, "scores.pt"))],
    )
    trainer.predict(Scorer(), DataLoader(rows, batch_size=2), return_predictions=False)
    trainer.strategy.barrier()
    if trainer.is_global_zero:
        print("scores:", torch.load(os.path.join(OUT, "scores.pt")).flatten().tolist())
        shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()

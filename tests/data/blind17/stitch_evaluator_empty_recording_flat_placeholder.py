# verify: error
"""Stitching evaluator whose stand-in for a recording a process never saw is a flat empty tensor.

Modelled on neuro-galaxy/torch_brain#59 (https://github.com/neuro-galaxy/torch_brain/pull/59):
"a bug when doing distributed training. It happens when a rank ends up with no sample from a
given recording, which leads to an empty cache and thus an error. The only solution is to create a
tensor.empty, but requires knowing the dimensions of the prediction and targets."

A Lightning `Callback` collects, per recording, the predictions of the validation windows the
process was dealt, and at the end of the epoch gathers each recording's predictions from every
process with torchmetrics' `gather_all_tensors` (which pads tensors of different lengths, so the
two processes may hold different numbers of windows of one recording). `torch.cat` of an empty
list raises, so a recording the process never saw gets `torch.tensor([])` instead.

Where the ranks part ways: Lightning deals the eight validation windows out with a
`DistributedSampler(shuffle=False)`, rows `rank::2`. The only window of recording "rat_c" is row
6, so process 0 holds one (1, 2) prediction for it and process 1 none. Its stand-in is
`torch.tensor([])`, one dimension where the predictions have two: `gather_all_tensors` first
all-gathers every process's shape, two int64 values on process 0 against one on process 1, and
gloo aborts. The timestamps of "rat_c", gathered just before, are one-dimensional everywhere and
pass. The earlier recordings ("rat_a": 2 and 2 windows, "rat_b": 1 and 2) pass too.
"""
import os
import tempfile

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchmetrics.utilities.distributed import gather_all_tensors

RECORDINGS = ["rat_a", "rat_b", "rat_c"]
OUT_DIM = 2  # hand velocity (vx, vy)
FEATURES = 4
# validation windows in file order: (recording, window start in seconds)
VAL_WINDOWS = [
    ("rat_a", 0.0), ("rat_a", 1.0), ("rat_b", 0.0), ("rat_b", 1.0),
    ("rat_a", 2.0), ("rat_a", 3.0), ("rat_c", 0.0), ("rat_b", 2.0),
]


def run_dir():
    name = f"blind17-stitch-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    return os.path.join(tempfile.gettempdir(), name)


class Windows(Dataset):
    def __init__(self, windows, seed):
        self.windows = windows
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(len(windows), FEATURES, generator=g)
        self.y = torch.randn(len(windows), OUT_DIM, generator=g)

    def __len__(self):
        return len(self.windows)

    def __getitem__(self, i):
        name, start = self.windows[i]
        return {"rec": RECORDINGS.index(name), "t": torch.tensor(start), "x": self.x[i], "y": self.y[i]}


class Decoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, OUT_DIM))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        loss = nn.functional.mse_loss(self(batch["x"]), batch["y"])
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        return self(batch["x"])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class StitchEvaluator(L.Callback):
    """Stitches each recording's windows back together and scores the whole recording."""

    def __init__(self, recordings):
        self.recordings = recordings
        self.cache = {}

    def on_validation_epoch_start(self, trainer, pl_module):
        self.cache = {name: {"t": [], "pred": [], "true": []} for name in self.recordings}

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        for rec, t, pred, true in zip(batch["rec"].tolist(), batch["t"], outputs.detach(), batch["y"]):
            entry = self.cache[self.recordings[rec]]
            entry["t"].append(t.reshape(1))
            entry["pred"].append(pred.reshape(1, OUT_DIM))
            entry["true"].append(true.reshape(1, OUT_DIM))

    @staticmethod
    def _stack(parts):
        # torch.cat([]) raises: a recording this process was not dealt gets an empty tensor
        return torch.cat(parts) if parts else torch.tensor([])

    def on_validation_epoch_end(self, trainer, pl_module):
        scores = {}
        for name in self.recordings:
            entry = self.cache[name]
            t = torch.cat(gather_all_tensors(self._stack(entry["t"])))
            pred = torch.cat(gather_all_tensors(self._stack(entry["pred"])))  # expect: BCL015
            true = torch.cat(gather_all_tensors(self._stack(entry["true"])))
            order = t.argsort()
            err = (pred[order] - true[order]).pow(2).sum()
            total = (true - true.mean(0)).pow(2).sum().clamp_min(1e-8)
            scores[f"val_r2/{name}"] = float(1 - err / total)
        if trainer.is_global_zero:
            print(f"epoch {trainer.current_epoch}: " + ", ".join(f"{k}={v:.3f}" for k, v in scores.items()))


def main():
    train = DataLoader(Windows([("rat_a", float(i)) for i in range(8)], seed=1), batch_size=2)
    val = DataLoader(Windows(VAL_WINDOWS, seed=2), batch_size=2)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=2,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=run_dir(),
        callbacks=[StitchEvaluator(RECORDINGS)],
    )
    trainer.fit(Decoder(), train_dataloaders=train, val_dataloaders=val)


if __name__ == "__main__":
    main()

# verify: ok
"""Look-alike: the same flat `torch.tensor([])` stand-in, for predictions that are flat too.

The same evaluator and the same validation windows as stitch_evaluator_empty_recording_flat_placeholder
(process 1 is dealt no window of recording "rat_c", whose stand-in is `torch.tensor([])`), but
the decoder predicts one value per window (running speed), so the predictions, targets and
timestamps are all one-dimensional: the empty stand-in has the same number of dimensions as
process 0's tensors, `gather_all_tensors` pads it to length 1, gathers and trims it again.
"""
import os
import tempfile

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchmetrics.utilities.distributed import gather_all_tensors

RECORDINGS = ["rat_a", "rat_b", "rat_c"]
OUT_DIM = 1  # running speed
FEATURES = 4
# validation windows in file order: (recording, window start in seconds)
VAL_WINDOWS = [
    ("rat_a", 0.0), ("rat_a", 1.0), ("rat_b", 0.0), ("rat_b", 1.0),
    ("rat_a", 2.0), ("rat_a", 3.0), ("rat_c", 0.0), ("rat_b", 2.0),
]


def run_dir():
    name = f"blind17-stitch-speed-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
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
            entry["pred"].append(pred.reshape(1))
            entry["true"].append(true.reshape(1))

    @staticmethod
    def _stack(parts):
        # torch.cat([]) raises: a recording this process was not dealt gets an empty tensor
        return torch.cat(parts) if parts else torch.tensor([])

    def on_validation_epoch_end(self, trainer, pl_module):
        scores = {}
        for name in self.recordings:
            entry = self.cache[name]
            t = torch.cat(gather_all_tensors(self._stack(entry["t"])))
            pred = torch.cat(gather_all_tensors(self._stack(entry["pred"])))
            true = torch.cat(gather_all_tensors(self._stack(entry["true"])))
            order = t.argsort()
            err = (pred[order] - true[order]).pow(2).sum()
            total = (true - true.mean()).pow(2).sum().clamp_min(1e-8)
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

# verify: ok
"""Look-alike: the metric is computed on every process, and only its synced value gates the log.

`compute()` runs on every process (process 1, with no object, joins the sync with an empty
state); the `isnan` test reads the value computed from every process's hits, the same
everywhere, and `self.log` without `sync_dist` runs no collective (after
https://github.com/weecology/DeepForest/issues/1407).
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torchmetrics import Metric
from torchmetrics.utilities import dim_zero_cat

RUN_DIR = os.path.join(
    tempfile.gettempdir(), f"blind32-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-hitrate"
)


class HitRate(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("hits", default=[], dist_reduce_fx="cat")

    def update(self, scores, has_object):
        self.hits.append((scores[has_object] > 0.5).float())

    def compute(self):
        return dim_zero_cat(self.hits).mean()


class Detector(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 1)
        self.hit_rate = HitRate()

    def validation_step(self, batch, batch_idx):
        x, has_object = batch
        scores = torch.sigmoid(self.head(x)).squeeze(1)
        if has_object.any():
            self.hit_rate.update(scores, has_object)

    def on_validation_epoch_end(self):
        rate = self.hit_rate.compute()
        if not torch.isnan(rate):
            self.log("val_hit_rate", rate)
        self.hit_rate.reset()


def main():
    torch.manual_seed(0)
    x = torch.randn(12, 4)
    has_object = torch.tensor([True, False] * 6)  # every odd frame is empty
    data = TensorDataset(x, has_object)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, use_distributed_sampler=False,
        default_root_dir=RUN_DIR,
    )
    sampler = DistributedSampler(data, num_replicas=2, rank=int(os.environ["RANK"]), shuffle=False)
    trainer.validate(Detector(), DataLoader(data, batch_size=2, sampler=sampler))
    trainer.strategy.barrier()
    if trainer.is_global_zero:
        shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

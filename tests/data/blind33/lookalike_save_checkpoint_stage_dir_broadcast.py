# verify: ok
"""Look-alike: each process still calls `tempfile.mkdtemp()`, but global rank 0's directory is
broadcast (`trainer.strategy.broadcast`) and used by every process, which removes its own unused
one, so every process's check finds the file and nobody retries.

The broken program's report: https://github.com/Lightning-AI/pytorch-lightning/issues/5319
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

PREFIX = f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-"
FINAL = os.path.join(tempfile.gettempdir(), PREFIX + "published")


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class StageAndPublish(L.Callback):
    def on_train_end(self, trainer, pl_module):
        mine = tempfile.mkdtemp(prefix=PREFIX + "stage-")
        stage = trainer.strategy.broadcast(mine)
        if stage != mine:
            os.rmdir(mine)
        path = os.path.join(stage, "final.ckpt")
        trainer.save_checkpoint(path)
        if not os.path.isfile(path):
            print(f"{path} did not land, retrying once")
            trainer.save_checkpoint(path)
        if os.path.isfile(path):
            os.makedirs(FINAL, exist_ok=True)
            shutil.copy(path, os.path.join(FINAL, "final.ckpt"))
        trainer.strategy.barrier()
        shutil.rmtree(stage, ignore_errors=True)


def main():
    torch.manual_seed(0)
    x = torch.randn(32, 4)
    data = TensorDataset(x, x.sum(dim=1, keepdim=True))
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2,
        callbacks=[StageAndPublish()], logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Regressor(), DataLoader(data, batch_size=4))
    trainer.strategy.barrier()
    shutil.rmtree(FINAL, ignore_errors=True)


if __name__ == "__main__":
    main()

# verify: hang,error
"""A Lightning callback that stages the final checkpoint in a fresh temporary directory, checks
that the file landed, retries once if it did not, then publishes it.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/5319: a checkpoint directory
that differs between the DDP processes hangs training, since Lightning writes the file on global
rank 0 only and keeps the processes in step through the checkpoint calls themselves.

`tempfile.mkdtemp()` is called by each process and gives each its own directory.
`trainer.save_checkpoint` writes only on global rank 0, into process 0's directory, and ends in a
barrier. Process 1 then finds no file in its own directory and calls `trainer.save_checkpoint`
a second time, alone: a barrier that process 0 never enters.
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
        stage = tempfile.mkdtemp(prefix=PREFIX + "stage-")
        path = os.path.join(stage, "final.ckpt")
        trainer.save_checkpoint(path)
        if not os.path.isfile(path):
            print(f"{path} did not land, retrying once")
            trainer.save_checkpoint(path)  # expect: BCL011
        if os.path.isfile(path):
            os.makedirs(FINAL, exist_ok=True)
            shutil.copy(path, os.path.join(FINAL, "final.ckpt"))
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

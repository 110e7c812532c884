# verify: ok
"""A callback that writes a run card once: its "already saved" flag is set on the writer only.

Modelled on Lightning-AI/pytorch-lightning#14927
(https://github.com/Lightning-AI/pytorch-lightning/pull/14927): `SaveConfigCallback.already_saved`
was set only on global zero, and a later `setup()` hung the job until the flag was broadcast.
`RunCard.setup` runs at the start of every Trainer entry point; its first part asks the writer,
through `trainer.strategy.broadcast`, whether a card is already on disk. `trainer.fit` and then
`trainer.validate` call it twice: the second time rank 0 returns at once, rank 1 broadcasts again.

Hand-fixed: the flag is broadcast from the writer at the end of `setup()` (as #14927 did), so every
process returns early together on the second entry point.
"""
import json
import os
import tempfile

import torch
from lightning.pytorch import Callback, LightningModule, Trainer


class RunCard(Callback):
    def __init__(self, path):
        self.path = path
        self.already_saved = False

    def setup(self, trainer, pl_module, stage):
        if self.already_saved:
            return
        exists = trainer.strategy.broadcast(os.path.exists(self.path))
        if trainer.is_global_zero:
            if not exists:
                with open(self.path, "w") as f:
                    json.dump({"stage": stage, "world_size": trainer.world_size}, f)
            self.already_saved = True
        self.already_saved = trainer.strategy.broadcast(self.already_saved)


class Regressor(LightningModule):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        return self.fc(batch).pow(2).mean()

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.fc(batch).pow(2).mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return torch.utils.data.DataLoader(torch.randn(8, 3), batch_size=2)

    def val_dataloader(self):
        return torch.utils.data.DataLoader(torch.randn(4, 3), batch_size=2)


def main():
    run_dir = os.path.join(tempfile.gettempdir(), f"blind10-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}")
    os.makedirs(run_dir, exist_ok=True)
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0, callbacks=[RunCard(os.path.join(run_dir, "run_card.json"))],
    )
    model = Regressor()
    trainer.fit(model)
    trainer.validate(model)


if __name__ == "__main__":
    main()

# verify: hang,error
"""Scores gathered with `self.all_gather` in `predict_step`, where Lightning's sampler does not pad.

Modelled on Lightning-AI/pytorch-lightning#10618
(https://github.com/Lightning-AI/pytorch-lightning/issues/10618): `trainer.predict` under DDP returns
only this process's share of the predictions, and the maintainers answer that they do not gather them
because the number of prediction batches need not be the same on every process. The user's way out,
gathering inside `predict_step`, runs one `all_gather` per batch: for prediction Lightning wraps the
sampler in `UnrepeatedDistributedSamplerWrapper`, which deals 9 rows as 5 and 4 (3 and 2 batches of 2),
so process 0 waits in its third gather for a process that has left the loop.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset
import lightning as L

ROWS = 9
BATCH = 2


class Scorer(L.LightningModule):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def predict_step(self, batch, batch_idx):
        x, row_id = batch
        scores = self(x)
        # every process holds the whole batch's scores, in rank order
        return self.all_gather(torch.stack([row_id.float(), scores], dim=-1))  # expect: BCL005


def main():
    torch.manual_seed(1)
    features = torch.randn(ROWS, 4)
    dataset = TensorDataset(features, torch.arange(ROWS))
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=False)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    )
    batches = trainer.predict(Scorer(), dataloaders=loader)
    table = torch.cat([b.reshape(-1, 2) for b in batches])
    ranking = table[table[:, 1].argsort(descending=True), 0].long().tolist()
    if trainer.is_global_zero:
        print("top rows:", ranking[:3])


if __name__ == "__main__":
    main()

# verify: ok
"""Look-alike: the same per-batch `self.all_gather` of scores, but in `validation_step` under `trainer.validate`.

For validation Lightning puts a plain `DistributedSampler` on the loader, which pads 9 rows to 5 per
process (the first row repeated), so both processes run 3 batches of 2, 2 and 1 and meet in every
gather. The duplicated row is dropped by its id afterwards.
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
        self.table = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def validation_step(self, batch, batch_idx):
        x, row_id = batch
        scores = self(x)
        self.table.append(self.all_gather(torch.stack([row_id.float(), scores], dim=-1)))


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
    model = Scorer()
    trainer.validate(model, dataloaders=loader, verbose=False)
    table = torch.cat([b.reshape(-1, 2) for b in model.table])
    by_row = {int(r): float(s) for r, s in table.tolist()}
    ranking = sorted(by_row, key=by_row.get, reverse=True)
    if trainer.is_global_zero:
        print("top rows:", ranking[:3], "of", len(by_row))


if __name__ == "__main__":
    main()

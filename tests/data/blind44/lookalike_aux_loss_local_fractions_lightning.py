# verify: ok
"""Look-alike: a load-balancing loss from this process's own routing fractions, logged without sync_dist.

The auxiliary loss differs between processes, but it only enters the loss that DDP's backward
averages; it is logged every step on every process (no sync_dist, no condition), and a local
note prints when a batch left an expert without tokens. Every expert runs on every batch.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

D, E, V = 4, 2, 16
RECORDS = [[1, 2, 3, 4], [5, 6, 7, 8], [2, 4, 6, 8], [9, 2, 3, 4]]


class HashRoutedLM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(D, D) for _ in range(E))
        self.head = torch.nn.Linear(D, V)
        self.router = torch.nn.Linear(D, E)

    def moe(self, h, ids):
        route = ids % E
        out = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            sel = route == e
            out = out.index_put((sel,), expert(h[sel]))
        return h + out

    def training_step(self, batch, batch_idx):
        ids = batch[0].flatten()
        h = self.embed(ids)
        fractions = torch.bincount(ids % E, minlength=E).float() / ids.numel()
        probs = self.router(h).softmax(-1).mean(0)
        aux = E * (fractions * probs).sum()
        if (fractions == 0).any():
            print(f"step {batch_idx}: an expert got no local tokens")
        self.log("aux_loss", aux)
        return torch.nn.functional.cross_entropy(self.head(self.moe(h, ids)), ids) + 0.01 * aux

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    root = os.path.join(tempfile.gettempdir(), "blind44-{}-{}-aux".format(
        os.environ.get("MASTER_ADDR", "local"), os.environ.get("MASTER_PORT", "0")))
    torch.manual_seed(0)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=root)
    loader = DataLoader(TensorDataset(torch.tensor(RECORDS)), batch_size=1)
    trainer.fit(HashRoutedLM(), loader)
    trainer.strategy.barrier()
    if trainer.is_global_zero:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

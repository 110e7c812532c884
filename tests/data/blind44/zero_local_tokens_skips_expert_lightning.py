# verify: hang,error
"""An expert that no local token was routed to is skipped, so DDP's gradient reduction never completes.

Modelled on https://github.com/NVIDIA/Megatron-LM/pull/4851: when a rank received zero
locally-routed tokens, the grouped MLP skipped its linear layers while the peers ran them; the
autograd graphs diverged and the next DDP collective hung. Tokens are hash-routed (id % experts);
the DistributedSampler gives one process a batch whose ids are all even.
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

    def moe(self, h, ids):
        route = ids % E
        out = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            sel = route == e
            if not sel.any():  # expect: BCL011
                continue
            out = out.index_put((sel,), expert(h[sel]))
        return h + out

    def training_step(self, batch, batch_idx):
        ids = batch[0].flatten()
        return torch.nn.functional.cross_entropy(self.head(self.moe(self.embed(ids), ids)), ids)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    root = os.path.join(tempfile.gettempdir(), "blind44-{}-{}-run".format(
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

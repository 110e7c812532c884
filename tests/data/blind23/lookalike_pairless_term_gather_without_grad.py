# verify: ok
"""Look-alike: the same pairs-only contrastive term, against embeddings gathered without gradients.

Modelled on modelscope/ms-swift#5477 (https://github.com/modelscope/ms-swift/issues/5477),
InfoNCE with `torch.distributed.nn.all_gather` (a gather whose backward is a collective too)
blocking after some iterations.

In the bug, an autograd gather (`GatherWithGrad`, like Lightning's old `AllGatherGrad`): the forward
all-gathers the embeddings, the backward all-reduces their gradient. Every process runs the
forward. The contrastive term is added to the reconstruction loss only when the process's own
rows have a positive partner somewhere in the global batch; on the process whose classes occur
nowhere else the loss does not depend on the gathered tensor, so its backward never runs
`GatherWithGrad.backward` -- the other process's all-reduce there meets DDP's gradient
all-reduce instead.

Here the other processes' embeddings come from `self.all_gather(emb)` without `sync_grads`: a
forward-only gather that every process runs, whose result carries no graph, so the branch only
changes each process's local loss; the only collectives in the backward are DDP's own.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from torch.utils.data import DataLoader, Subset, TensorDataset

# Rows are dealt alternately to the processes: process 0 gets classes 0, 0, 1, 1 and process 1
# gets 2, 3, 4, 5.
LABELS = [0, 2, 0, 3, 1, 4, 1, 5]


def contrastive(emb, all_emb, pos_mask, temperature=0.5):
    logits = F.normalize(emb, dim=1) @ F.normalize(all_emb, dim=1).T / temperature
    logp = logits.log_softmax(dim=1)
    return -(logp * pos_mask).sum() / pos_mask.sum()


class PairAutoencoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def training_step(self, batch, batch_idx):
        x, y = batch
        emb = self.enc(x)
        recon = F.mse_loss(self.dec(emb), x)
        all_emb = self.all_gather(emb).flatten(0, 1)
        all_y = self.all_gather(y).flatten()
        rank, n = self.global_rank, len(y)
        pos = (y[:, None] == all_y[None, :]).float()
        pos[torch.arange(n), rank * n + torch.arange(n)] = 0.0
        if pos.sum() > 0:
            loss = recon + contrastive(emb, all_emb, pos)
        else:
            loss = recon
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        torch.manual_seed(0)
        x = torch.randn(len(LABELS), 8)
        ds = TensorDataset(x, torch.tensor(LABELS))
        mine = Subset(ds, range(self.global_rank, len(ds), self.trainer.world_size))
        return DataLoader(mine, batch_size=4, shuffle=False)


def main():
    torch.manual_seed(0)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, use_distributed_sampler=False,
    )
    trainer.fit(PairAutoencoder())


if __name__ == "__main__":
    main()

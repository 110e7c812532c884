# verify: ok
"""Hand fix: the contrastive term is always part of the loss, zero where a batch has no pairs.

Modelled on modelscope/ms-swift#5477 (https://github.com/modelscope/ms-swift/issues/5477),
InfoNCE with `torch.distributed.nn.all_gather` (a gather whose backward is a collective too)
blocking after some iterations.

`GatherWithGrad` is the usual autograd gather (Lightning's old `AllGatherGrad`): the forward
all-gathers the embeddings, the backward all-reduces their gradient. Every process runs the
forward. The contrastive term is added to the reconstruction loss only when the process's own
rows have a positive partner somewhere in the global batch; on the process whose classes occur
nowhere else the loss does not depend on the gathered tensor, so its backward never runs
`GatherWithGrad.backward` -- the other process's all-reduce there meets DDP's gradient
all-reduce instead.

Here the term is added on every process (an all-zero mask gives 0, divided by at least 1), so
every loss depends on the gathered tensor and every backward runs the gather's all-reduce.
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


class GatherWithGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        return torch.cat(out)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad)
        n = grad.shape[0] // dist.get_world_size()
        rank = dist.get_rank()
        return grad[rank * n:(rank + 1) * n]


def contrastive(emb, all_emb, pos_mask, temperature=0.5):
    logits = F.normalize(emb, dim=1) @ F.normalize(all_emb, dim=1).T / temperature
    logp = logits.log_softmax(dim=1)
    return -(logp * pos_mask).sum() / pos_mask.sum().clamp(min=1.0)


class PairAutoencoder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def training_step(self, batch, batch_idx):
        x, y = batch
        emb = self.enc(x)
        recon = F.mse_loss(self.dec(emb), x)
        all_emb = GatherWithGrad.apply(emb)
        all_y = self.all_gather(y).flatten()
        rank, n = self.global_rank, len(y)
        pos = (y[:, None] == all_y[None, :]).float()
        pos[torch.arange(n), rank * n + torch.arange(n)] = 0.0
        return recon + contrastive(emb, all_emb, pos)

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

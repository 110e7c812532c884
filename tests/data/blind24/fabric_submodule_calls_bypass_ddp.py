# verify: divergent check=PARAM_SUM
"""Backbone and head called one by one through the Fabric-wrapped model, never through its forward.

Modelled on intel/e2eAIOK#198 (https://github.com/intel/e2eAIOK/pull/198): a model made of two
submodules, wrapped in `DistributedDataParallel`, whose training step called each submodule on its own
to add a second loss on the features; the forward and backward passes never went through the DDP
wrapper, so no gradient was all-reduced and every process trained its own model. Here `fabric.setup`
wraps the model in DDP; `model.backbone` and `model.head` are looked up on the wrapper, which hands
back the original submodules, so `fabric.backward` runs no all-reduce. Each process reads its own
half of the rows, and the replicas' parameters drift apart.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L

PARAM_SUM = None


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.backbone(x))


def main():
    global PARAM_SUM
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = TwoStage()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    model, optimizer = fabric.setup(model, optimizer)

    g = torch.Generator().manual_seed(1)
    x = torch.randn(32, 6, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()
    loader = fabric.setup_dataloaders(DataLoader(TensorDataset(x, y), batch_size=4))

    for epoch in range(2):
        total = torch.zeros(())
        for xb, yb in loader:
            feats = model.backbone(xb)  # expect: BCL011
            logits = model.head(feats)
            loss = nn.functional.cross_entropy(logits, yb) + 0.01 * feats.pow(2).mean()
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
            total += loss.detach()
        mean_loss = fabric.all_reduce(total / len(loader), reduce_op="mean")
        fabric.print(f"epoch {epoch}: loss {mean_loss.item():.4f}")

    PARAM_SUM = round(sum(p.detach().sum().item() for p in model.parameters()), 6)


if __name__ == "__main__":
    main()

# verify: ok check=PARAM_SUM
"""Look-alike: `model.backbone(...)` called on the Fabric-wrapped model, but only for a no-grad probe.

Training goes through `model(xb)`, the DDP wrapper's forward, so `fabric.backward` all-reduces the
gradients; the submodule call that skips the wrapper only measures the feature norm of a fixed probe
batch under `torch.no_grad()`, which no backward ever reads. The replicas stay equal.
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
        feats = self.backbone(x)
        return self.head(feats), feats


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
            logits, feats = model(xb)
            loss = nn.functional.cross_entropy(logits, yb) + 0.01 * feats.pow(2).mean()
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
            total += loss.detach()
        mean_loss = fabric.all_reduce(total / len(loader), reduce_op="mean")
        with torch.no_grad():
            probe_norm = model.backbone(x[:8]).norm(dim=1).mean()
        fabric.print(f"epoch {epoch}: loss {mean_loss.item():.4f}, probe feature norm {probe_norm.item():.4f}")

    PARAM_SUM = round(sum(p.detach().sum().item() for p in model.parameters()), 6)


if __name__ == "__main__":
    main()

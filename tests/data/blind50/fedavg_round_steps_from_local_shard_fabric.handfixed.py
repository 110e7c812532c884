# verify: ok
"""Hand fix of fedavg_round_steps_from_local_shard_fabric: a round is a fixed number of local
steps agreed by every client (the smallest `local_epochs * len(loader)`, taken with
`fabric.all_reduce(..., reduce_op="min")`), so every client aggregates at the same steps.

https://github.com/felisat/clustered-federated-learning/issues/1
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset


class FedClient:
    def __init__(self, fabric, model, loader, local_epochs):
        self.fabric, self.model, self.loader = fabric, model, loader
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        local = torch.tensor(float(local_epochs * len(loader)))
        self.steps_per_round = int(fabric.all_reduce(local, reduce_op="min").item())
        self.step = 0

    def local_step(self, xb, yb):
        loss = torch.nn.functional.cross_entropy(self.model(xb), yb)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        if self.step % self.steps_per_round == 0:
            for p in self.model.parameters():
                p.data.copy_(self.fabric.all_reduce(p.data, reduce_op="mean"))


fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
torch.manual_seed(0)
x = torch.randn(40, 5)
y = torch.randint(0, 2, (40,))
mine = y == fabric.global_rank % 2  # label-skewed clients: each holds one class
loader = DataLoader(TensorDataset(x[mine], y[mine]), batch_size=4)
client = FedClient(fabric, torch.nn.Linear(5, 2), loader, local_epochs=2)
total_steps = 60
while client.step < total_steps:
    for xb, yb in loader:
        client.local_step(xb, yb)
        if client.step == total_steps:
            break
fabric.print(f"{len(loader)} batches per epoch, {client.step // client.steps_per_round} rounds")
fabric.barrier()

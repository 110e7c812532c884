# verify: ok
"""Look-alike: federated-averaging rounds under Lightning Fabric whose length is
`local_epochs * len(loader)` on each process, like a round length taken from a local shard; but
the loader went through `fabric.setup_dataloaders`, whose `DistributedSampler` pads the split so
that every process gets the same number of batches. Every process aggregates at the same steps.
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset


class FedClient:
    def __init__(self, fabric, model, loader, local_epochs):
        self.fabric, self.model, self.loader = fabric, model, loader
        self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        self.steps_per_round = local_epochs * len(loader)
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
x = torch.randn(41, 5)  # an odd count: the sampler pads one process's split
y = torch.randint(0, 2, (41,))
loader = fabric.setup_dataloaders(DataLoader(TensorDataset(x, y), batch_size=4))
client = FedClient(fabric, torch.nn.Linear(5, 2), loader, local_epochs=2)
total_steps = 60
while client.step < total_steps:
    for xb, yb in loader:
        client.local_step(xb, yb)
        if client.step == total_steps:
            break
fabric.print(f"{len(loader)} batches per epoch, {client.step // client.steps_per_round} rounds")
fabric.barrier()

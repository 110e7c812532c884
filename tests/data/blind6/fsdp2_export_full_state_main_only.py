# verify: error
"""FSDP2: a periodic export that gathers the full state dict inside the main process's branch.

Modelled on ibrahimethemhamamci/CT-CLIP#16 (https://github.com/ibrahimethemhamamci/CT-CLIP/issues/16):
under FSDP the trainer saved with
`if self.is_main and not (steps % self.save_model_every): state_dict = accelerator.get_state_dict(...)`,
and training then "got stuck in the backward of the next step"; and on
huggingface/transformers#10596 (https://github.com/huggingface/transformers/pull/10596), where a
sharded model's `state_dict()` synchronises and must be called on all processes. Here the model
is sharded with `fully_shard` (FSDP2); its `state_dict()` holds DTensor shards, and
`full_state_dict()` turns each into a full tensor with `DTensor.full_tensor()`, an all-gather.
The trainer calls it only on the main process, every `export_every` steps: its all-gathers meet
process 1's all-gathers of the next step's forward (measured: gloo aborts, "256 vs 34" bytes).
"""
import os
import tempfile
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor


@dataclass
class TrainConfig:
    width: int = 16
    steps: int = 6
    export_every: int = 3
    batch_size: int = 8


class MLP(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(3)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.head(x)


def full_state_dict(model: nn.Module) -> dict:
    state = {}
    for name, value in model.state_dict().items():
        state[name] = value.full_tensor() if isinstance(value, DTensor) else value
    return state


class Trainer:
    def __init__(self, cfg: TrainConfig, export_dir: str):
        self.cfg = cfg
        self.export_dir = export_dir
        self.is_main = dist.get_rank() == 0
        mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        torch.manual_seed(0)
        self.model = MLP(cfg.width)
        for layer in self.model.layers:
            fully_shard(layer, mesh=mesh)
        fully_shard(self.model, mesh=mesh)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)

    def step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self):
        gen = torch.Generator().manual_seed(dist.get_rank())
        total = 0.0
        for step in range(1, self.cfg.steps + 1):
            x = torch.randn(self.cfg.batch_size, self.cfg.width, generator=gen)
            loss = self.step(x, x.mean(dim=1, keepdim=True))
            total += loss
            if self.is_main and not (step % self.cfg.export_every):
                state = full_state_dict(self.model)  # expect: BCL011
                torch.save(state, os.path.join(self.export_dir, f"model-{step}.pt"))
                print(f"step {step}: loss {loss:.4f}, exported")
        mean_loss = torch.tensor([total / self.cfg.steps])
        dist.all_reduce(mean_loss)
        return mean_loss.item() / dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    export_dir = os.path.join(tempfile.gettempdir(), f"blind6-fsdp2-export-{job}")
    os.makedirs(export_dir, exist_ok=True)
    mean_loss = Trainer(TrainConfig(), export_dir).fit()
    if dist.get_rank() == 0:
        print(f"mean training loss over ranks: {mean_loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

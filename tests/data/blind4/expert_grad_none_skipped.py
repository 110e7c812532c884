# verify: error
"""Gradient averaging that skips the parameters without a gradient.

Modelled on KellerJordan/Muon#37 (https://github.com/KellerJordan/Muon/issues/37), "training
hangs when skipping parameters with `p.grad is None`", and deepspeedai/DeepSpeed#291
(https://github.com/deepspeedai/DeepSpeed/pull/291): ranks whose parameters got no gradient
skip them in the all-reduce, and the others do not.

A two-expert layer routes each sample by its modality; an expert that gets no sample is not
called, so its weights keep `grad = None` after `zero_grad()`. Rank 0's shard holds text and
image samples, rank 1's only text, so `average_gradients()` all-reduces six tensors on rank 0
and four on rank 1: the image expert's weight (32 floats) meets the head's (8).
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F

# (modality, features) records; the dataset is sharded by position.
RECORDS = [("text", 0.1), ("image", 0.9), ("text", 0.4), ("text", 0.2), ("text", 0.3), ("text", 0.6)]
MODALITIES = ["text", "image"]


class TwoExpertLayer(torch.nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.experts = torch.nn.ModuleList(torch.nn.Linear(dim, 8) for _ in MODALITIES)
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x: torch.Tensor, modality: torch.Tensor) -> torch.Tensor:
        hidden = torch.zeros(x.shape[0], 8)
        for index, expert in enumerate(self.experts):
            routed = modality == index
            if routed.any():
                hidden[routed] = expert(x[routed])
        return self.head(torch.relu(hidden))


def average_gradients(model: torch.nn.Module, world: int) -> None:
    for p in model.parameters():
        if p.grad is None:  # expect: BCL005
            continue
        dist.all_reduce(p.grad)
        p.grad /= world


def to_batch(records):
    modality = torch.tensor([MODALITIES.index(m) for m, _ in records])
    x = torch.tensor([[v, v * v, 1.0 - v, 0.5] for _, v in records])
    return x, modality, x.sum(dim=1, keepdim=True)


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = TwoExpertLayer()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, modality, y = to_batch(RECORDS[rank * 3:(rank + 1) * 3])
    for step in range(3):
        opt.zero_grad()
        loss = F.mse_loss(model(x, modality), y)
        loss.backward()
        average_gradients(model, world)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand-fixed twin of expert_grad_none_skipped.py: a missing gradient is all-reduced as zeros.

Modelled on deepspeedai/DeepSpeed#291 (https://github.com/deepspeedai/DeepSpeed/pull/291), whose
fix pads the `None` gradients with zero tensors: every rank all-reduces every parameter, in the
same order, whichever experts its own samples reached.
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
        if p.grad is None:  # an expert none of this rank's samples reached
            p.grad = torch.zeros_like(p)
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

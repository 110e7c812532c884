# verify: divergent check=EXPERT_BIAS
"""Aux-loss-free load balancing updates the routing bias from this process's own token counts.

Modelled on the review of https://github.com/NVIDIA/TransformerEngine/pull/3471: the per-expert
token counts were reduced into a copy that was thrown away, so `update_expert_bias()` used each
process's local counts and the replicated expert biases drifted apart. DDP here does not
broadcast buffers (broadcast_buffers=False), as expert-parallel setups often configure it.
"""
import torch
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy

D, E, K = 4, 4, 1
EXPERT_BIAS = None


class BiasRoutedMoE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(D, E, bias=False)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(D, D) for _ in range(E))
        self.register_buffer("expert_bias", torch.zeros(E))
        self.register_buffer("tokens_per_expert", torch.zeros(E))

    def forward(self, x):
        scores = self.gate(x).sigmoid()
        chosen = (scores + self.expert_bias).topk(K, dim=-1).indices
        mask = torch.zeros_like(scores).scatter(1, chosen, 1.0)
        self.tokens_per_expert += mask.sum(0).detach()
        weights = scores * mask
        return sum(weights[:, e : e + 1] * expert(x) for e, expert in enumerate(self.experts))


def update_expert_bias(moe, coeff=0.05):
    with torch.no_grad():
        counts = moe.tokens_per_expert
        moe.expert_bias += coeff * torch.sign(counts.mean() - counts)  # expect: BCL002
        counts.zero_()


def main():
    global EXPERT_BIAS
    fabric = Fabric(accelerator="cpu", devices=2, strategy=DDPStrategy(broadcast_buffers=False))
    fabric.launch()
    torch.manual_seed(0)
    moe = BiasRoutedMoE()
    model, opt = fabric.setup(moe, torch.optim.SGD(moe.parameters(), lr=0.05))
    data = torch.Generator().manual_seed(500 + fabric.global_rank)  # this process's shard
    for _ in range(6):
        x = torch.randn(16, D, generator=data) + torch.randn(1, D, generator=data)
        loss = (model(x) - x).pow(2).mean()
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
        update_expert_bias(moe)
    EXPERT_BIAS = ",".join(f"{v:.2f}" for v in moe.expert_bias.tolist())
    fabric.print(f"bias on process 0: {EXPERT_BIAS}")


if __name__ == "__main__":
    main()

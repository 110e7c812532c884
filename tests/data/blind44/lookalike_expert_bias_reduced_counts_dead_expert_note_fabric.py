# verify: ok check=EXPERT_BIAS
"""Look-alike: the routing bias is updated from counts summed over processes; a local note flags dead experts.

The note reads this process's own counts (different on each process) and only prints; the bias
update, which every process must make alike, uses the all-reduced counts.
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


def update_expert_bias(fabric, moe, coeff=0.05):
    with torch.no_grad():
        local = moe.tokens_per_expert.clone()
        counts = fabric.all_reduce(moe.tokens_per_expert, reduce_op="sum")
        if (local == 0).any():
            print(f"process {fabric.global_rank}: experts unused locally: {(local == 0).nonzero().flatten().tolist()}")
        moe.expert_bias += coeff * torch.sign(counts.mean() - counts)
        moe.tokens_per_expert.zero_()


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
        update_expert_bias(fabric, moe)
    EXPERT_BIAS = ",".join(f"{v:.2f}" for v in moe.expert_bias.tolist())
    fabric.print(f"bias on process 0: {EXPERT_BIAS}")


if __name__ == "__main__":
    main()

# verify: hang
"""A sharded orthogonalising optimizer whose non-finite guard returns on the owning rank only.

Modelled on https://github.com/microsoft/dion/pull/79 (NorMuon: skip the step when the
Newton-Schulz output is non-finite): each rank orthogonalises the update of the parameters it
owns and the results are all-gathered; a guard that skips the step has to be agreed by every
rank ("the sync is required"), or the rank that detected the NaN leaves the all-gather alone.
"""
import warnings

import torch
import torch.distributed as dist

DIM = 8


def newton_schulz(g, steps=3):
    x = g / g.norm()  # a zero gradient gives 0/0
    for _ in range(steps):
        x = 1.5 * x - 0.5 * x @ x.t() @ x
    return x


class ShardedOrthoSGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    @torch.no_grad()
    def step(self):
        world, rank = dist.get_world_size(), dist.get_rank()
        for start in range(0, len(self.params), world):
            group = self.params[start:start + world]
            update = newton_schulz(group[rank].grad)
            if not torch.isfinite(update).all():
                warnings.warn(f"non-finite update for parameter {start + rank}, skipping step")
                return
            gathered = [torch.empty_like(update) for _ in group]
            dist.all_gather(gathered, update)  # expect: BCL005
            for p, u in zip(group, gathered):
                p.add_(u, alpha=-self.lr)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    weights = [torch.nn.Parameter(torch.randn(DIM, DIM) / DIM) for _ in range(4)]
    adapter_gate = 0.0  # the adapter (weights[3]) is switched off during warm-up
    opt = ShardedOrthoSGD(weights, lr=0.01)
    torch.manual_seed(1 + dist.get_rank())
    for step in range(3):
        h = torch.randn(4, DIM)
        for w in weights[:3]:
            h = torch.tanh(h @ w)
        h = h + adapter_gate * (h @ weights[3])
        h.pow(2).mean().backward()
        for w in weights:
            dist.all_reduce(w.grad)
            w.grad /= dist.get_world_size()
        opt.step()
        for w in weights:
            w.grad = None
    print(f"rank {dist.get_rank()} finished {step + 1} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

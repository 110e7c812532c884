# verify: divergent check=PARAM_DIGEST
"""Random-k gradient sparsification with error feedback: `RandomK.reduce` draws the k indices it
sends from the global RNG, which the script seeded per process (`1234 + RANK`) so that each
process draws its own batches. The processes all-reduce values taken at different indices and
write the average back at their own indices: every process applies a different update and the
replicas drift apart.

Shape of the report: neuralmagic/sparseml#429 (DDP processes with different seeds end up with
different masks, from `random.shuffle` under a per-process seed).
https://github.com/neuralmagic/sparseml/issues/429
"""
import os

import torch
import torch.distributed as dist


class RandomK:
    def __init__(self, numel, k):
        self.k = k
        self.error = torch.zeros(numel)

    def reduce(self, grad):
        m = grad.flatten() + self.error
        idx = torch.randperm(m.numel())[: self.k]  # expect: BCL002
        vals = m[idx].clone()
        dist.all_reduce(vals)
        vals /= dist.get_world_size()
        self.error = m.clone()
        self.error[idx] = 0.0
        out = torch.zeros_like(m)
        out[idx] = vals
        return out.view_as(grad)


dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
torch.manual_seed(1234 + int(os.environ["RANK"]))  # each process draws its own batches
compressors = {n: RandomK(p.numel(), k=max(1, p.numel() // 8)) for n, p in model.named_parameters()}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(8, 16)
    loss = (model(x) - x[:, :4]).pow(2).mean()
    loss.backward()
    for n, p in model.named_parameters():
        p.grad = compressors[n].reduce(p.grad)
    opt.step()
    opt.zero_grad()

flat = torch.cat([p.detach().flatten() for p in model.parameters()])
PARAM_DIGEST = f"{(flat * torch.arange(1, flat.numel() + 1)).sum().item():.4f}"
print("param digest", PARAM_DIGEST)
dist.destroy_process_group()

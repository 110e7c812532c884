# verify: ok check=PARAM_DIGEST
"""Hand fix of random_k_sparsify_rank_seeded_indices_helper: the indices come from a generator
of the compressor's own, seeded alike on every process and advanced once per call, so every
process sends and receives the same coordinates; the batches still differ per process.

https://github.com/neuralmagic/sparseml/issues/429
"""
import os

import torch
import torch.distributed as dist


class RandomK:
    def __init__(self, numel, k, seed):
        self.k = k
        self.error = torch.zeros(numel)
        self.gen = torch.Generator().manual_seed(seed)

    def reduce(self, grad):
        m = grad.flatten() + self.error
        idx = torch.randperm(m.numel(), generator=self.gen)[: self.k]
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
compressors = {
    n: RandomK(p.numel(), k=max(1, p.numel() // 8), seed=17 + i)
    for i, (n, p) in enumerate(model.named_parameters())
}
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

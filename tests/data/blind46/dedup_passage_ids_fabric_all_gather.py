# verify: error,hang
"""In-batch negatives: duplicate passages removed from the local batch, then gathered.

Modelled on https://github.com/huggingface/sentence-transformers/issues/3189 (the same
passage appearing twice in a batch is both a positive and an in-batch negative). Here each
process drops its own duplicate passage ids before `fabric.all_gather`; how many it drops
depends on its own batch, so the processes gather passage tensors of different lengths.
"""
import torch
import torch.nn.functional as F
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = fabric.setup(model, opt)
    gen = torch.Generator().manual_seed(50 + fabric.global_rank)
    corpus = torch.randn(10, 8, generator=torch.Generator().manual_seed(1))
    for step in range(4):
        pid = torch.randint(0, 10, (4,), generator=gen)
        queries = corpus[pid] + 0.1 * torch.randn(4, 8, generator=gen)
        uniq, target = torch.unique(pid, return_inverse=True)
        q = F.normalize(model(queries), dim=1)
        p = F.normalize(model(corpus[uniq]), dim=1)
        all_p = fabric.all_gather(p.detach())  # expect: BCL015
        all_p = all_p.reshape(-1, all_p.shape[-1])
        offset = fabric.global_rank * len(uniq)
        all_p[offset:offset + len(uniq)] = p
        loss = F.cross_entropy(q @ all_p.T / 0.1, target + offset)
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
    fabric.barrier()
    fabric.print("done")


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix: every passage is gathered at the batch's full size; duplicates are masked.

Modelled on https://github.com/huggingface/sentence-transformers/issues/3189 (the same
passage appearing twice in a batch is both a positive and an in-batch negative). The
broken program drops each process's duplicate passage ids before `fabric.all_gather`, so
the processes gather passage tensors of different lengths.

The fix gathers all four passages of every process, and their ids, and masks out of each
query's logits every gathered passage that has the query's own id but is not its positive.
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
        q = F.normalize(model(queries), dim=1)
        p = F.normalize(model(corpus[pid]), dim=1)
        all_p = fabric.all_gather(p.detach()).reshape(-1, p.shape[-1])
        all_pid = fabric.all_gather(pid).reshape(-1)
        offset = fabric.global_rank * len(pid)
        all_p[offset:offset + len(pid)] = p
        target = torch.arange(len(pid)) + offset
        logits = q @ all_p.T / 0.1
        dup = (pid[:, None] == all_pid[None, :])
        dup[torch.arange(len(pid)), target] = False
        loss = F.cross_entropy(logits.masked_fill(dup, -1e4), target)
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
    fabric.barrier()
    fabric.print("done")


if __name__ == "__main__":
    main()

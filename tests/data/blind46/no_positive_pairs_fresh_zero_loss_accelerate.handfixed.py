# verify: ok
"""Hand fix: a batch with no positive pair gives a zero that stays in the autograd graph.

Modelled on https://github.com/pytorch/pytorch/issues/23425 ("Hanging on when one gpu node
return zero as loss in the context of distributed data parallel training": a loss term that
has nothing to compute on one process is replaced by a new zero tensor, outside the
autograd graph, and the job hangs). Each process draws its own labels; a process whose
batch has no two samples of one class backs a detached zero through the prepared model,
so DDP's gradient all-reduce runs on the other process only.

The fix returns `emb.sum() * 0.0` (zero, but built from the model's output), so every
process runs the same backward, and DDP's all-reduce, every step.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


def supcon_loss(emb, labels, temperature=0.5):
    same = labels[:, None] == labels[None, :]
    same.fill_diagonal_(False)
    if not same.any():
        return emb.sum() * 0.0
    sim = emb @ emb.T / temperature
    sim = sim - torch.eye(len(emb)) * 1e4
    log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
    return -(log_prob[same]).mean()


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    gen = torch.Generator().manual_seed(40 + accelerator.process_index)
    for step in range(6):
        x = torch.randn(4, 8, generator=gen)
        labels = torch.randint(0, 6, (4,), generator=gen)
        loss = supcon_loss(F.normalize(model(x), dim=1), labels)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.wait_for_everyone()
    accelerator.print("done")
    accelerator.end_training()


if __name__ == "__main__":
    main()

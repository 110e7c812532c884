# verify: ok
"""Look-alike: no positive pair in the batch gives a zero loss that keeps the graph.

As in `no_positive_pairs_fresh_zero_loss_accelerate`, each process draws its own labels and
some batches have no two samples of one class. The loss returns early there too, but with
`emb.sum() * 0.0`, built from the prepared model's output: `accelerator.backward` runs on
every process every step, and so does DDP's gradient all-reduce (of zero gradients).
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
    skipped = 0
    for step in range(6):
        x = torch.randn(4, 8, generator=gen)
        labels = torch.randint(0, 6, (4,), generator=gen)
        loss = supcon_loss(F.normalize(model(x), dim=1), labels)
        skipped += int(float(loss) == 0.0)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    print("process", accelerator.process_index, "zero-loss batches", skipped)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

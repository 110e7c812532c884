# verify: ok
"""Hand fix: the non-pad entropies are padded across processes (NaN) before the gather,
and the padding is dropped afterwards.
"""
import torch
from accelerate import Accelerator

VOCAB, PAD = 12, 0
COMPLETIONS = [
    [3, 5, 7], [4, 2, 9, 1, 6], [8, 8], [2, 3, 4, 5, 6, 7],
    [9, 1, 1, 2], [5, 6, 7, 8, 9, 10, 11, 3], [10, 4], [7, 7, 3, 2, 1],
]
QUANTILE = 0.8


def pad_batch(rows):
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows])


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    policy = torch.nn.Sequential(torch.nn.Embedding(VOCAB, 16), torch.nn.Linear(16, VOCAB))
    policy = accelerator.prepare(policy)
    mine = COMPLETIONS[accelerator.process_index::accelerator.num_processes]
    ids = pad_batch(mine)
    logits = policy(ids)
    logp = torch.log_softmax(logits, dim=-1)
    entropy = -(logp.exp() * logp).sum(-1).detach()
    mask = ids != PAD
    non_pad = entropy[mask]
    padded = accelerator.pad_across_processes(non_pad, pad_index=float("nan"))
    gathered = accelerator.gather(padded)
    all_entropies = gathered[~torch.isnan(gathered)]
    threshold = torch.quantile(all_entropies, QUANTILE)
    high = (entropy >= threshold) & mask
    loss = -(logp.gather(-1, ids.unsqueeze(-1)).squeeze(-1) * high).sum() / high.sum().clamp(min=1)
    accelerator.backward(loss)
    accelerator.print(f"threshold {threshold.item():.4f}, {int(high.sum())} high-entropy tokens")
    accelerator.end_training()


if __name__ == "__main__":
    main()

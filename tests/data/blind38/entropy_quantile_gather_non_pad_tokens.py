# verify: error,hang
"""Entropy-quantile token mask computed from the non-pad tokens of each process's rollouts.

Modelled on huggingface/trl#3933 (https://github.com/huggingface/trl/issues/3933): with
`top_entropy_quantile < 1`, GRPO gathers the entropies of the non-pad completion tokens to find
the global quantile, and the non-pad counts differ between processes, so multi-GPU training hangs.
Here each process scores its own completions (EOS ends them at different lengths), keeps the
entropies of real tokens only, and gathers them with accelerate: 11 tokens against 24.
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
    all_entropies = accelerator.gather(non_pad)  # expect: BCL015
    threshold = torch.quantile(all_entropies, QUANTILE)
    high = (entropy >= threshold) & mask
    loss = -(logp.gather(-1, ids.unsqueeze(-1)).squeeze(-1) * high).sum() / high.sum().clamp(min=1)
    accelerator.backward(loss)
    accelerator.print(f"threshold {threshold.item():.4f}, {int(high.sum())} high-entropy tokens")
    accelerator.end_training()


if __name__ == "__main__":
    main()

# verify: ok
"""Look-alike: each process pads its batch to its own longest sequence before a gather.

That is the dynamic padding that breaks gathers, but the scores go through
`accelerator.pad_across_processes(..., dim=1)` first, which pads every process's tensor to the
longest length of all processes, so `accelerator.gather` receives one shape everywhere.
"""
import torch
from accelerate import Accelerator

PAD = 0
DOCS = [[5, 6, 7], [3, 4, 5, 6, 7, 8, 9], [8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2]]


def collate_dynamic(seqs):
    longest = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), longest), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
    return ids


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    embed = torch.nn.Embedding(16, 1)
    ids = collate_dynamic(DOCS[accelerator.process_index::accelerator.num_processes])
    with torch.no_grad():
        scores = embed(ids).squeeze(-1) * (ids != PAD)
    scores = accelerator.pad_across_processes(scores, dim=1, pad_index=0)
    gathered = accelerator.gather(scores)
    accelerator.print("gathered scores:", tuple(gathered.shape))
    accelerator.end_training()


if __name__ == "__main__":
    main()

# verify: hang
"""Greedy decoding that stops at each process's own end-of-sequence, over ZeRO-3-sharded weights.

Modelled on deepspeedai/DeepSpeed#8262 ("One rank may emit EOS and leave generation while other
ranks enter the next decode forward. The latter ranks then wait in the next ZeRO-3 parameter
all-gather") and huggingface/transformers#22242 (`generate(synced_gpus=True)` under ZeRO-3).

    https://github.com/deepspeedai/DeepSpeed/issues/8262
    https://github.com/huggingface/transformers/pull/22242

The decode loop has no collective of its own: the all-gather is inside the output layer's
forward (`ShardedLinear`, in mod_zero3.py). Each process decodes its own prompts (a strided
share) and leaves the loop at its own EOS: the bigram table sends process 0's prompts to EOS
after 2 and 1 tokens and process 1's after 4 and 5, so process 0 runs 3 forward passes (3
all-gathers) and process 1 runs 9.
"""
import torch
import torch.distributed as dist
from torch import nn

from mod_zero3 import ShardedLinear

VOCAB, EOS, MAX_NEW = 8, 0, 6
NEXT_TOKEN = {0: 0, 1: 2, 2: 0, 3: 4, 4: 5, 5: 6, 6: 0, 7: 3}  # what the toy model predicts
PROMPTS = [[7, 1], [5, 3], [4, 2], [6, 7]]


class BigramLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, VOCAB, _weight=torch.eye(VOCAB))
        table = torch.zeros(VOCAB, VOCAB)
        for token, following in NEXT_TOKEN.items():
            table[following, token] = 1.0
        self.head = ShardedLinear(table)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids[-1:]))[0]


@torch.no_grad()
def generate(model, prompt):
    ids = list(prompt)
    for _ in range(MAX_NEW):
        logits = model(torch.tensor(ids))  # expect: BCL005
        token = int(logits.argmax())
        ids.append(token)
        if token == EOS:
            break
    return ids[len(prompt):]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = BigramLM()
    produced = torch.zeros(1, dtype=torch.long)
    for prompt in PROMPTS[rank::world]:
        completion = generate(model, prompt)
        produced += len(completion)
        print(f"[rank {rank}] {prompt} -> {completion}")
    dist.all_reduce(produced)
    if rank == 0:
        print(f"{int(produced.item())} tokens generated")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

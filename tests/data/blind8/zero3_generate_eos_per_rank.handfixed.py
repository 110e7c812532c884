# verify: ok
"""Hand-fixed twin of zero3_generate_eos_per_rank.py.

The `synced_gpus` remedy of transformers#22242: each decode step first all-reduces whether
this process is done (MIN over "finished"); a process whose own sequence has ended keeps
running forward passes, discarding their output, until every process has finished, so all
processes run the sharded layer's all-gather the same number of times.
"""
import torch
import torch.distributed as dist
from torch import nn

from mod_zero3 import ShardedLinear

VOCAB, EOS, MAX_NEW = 8, 0, 6
NEXT_TOKEN = {0: 0, 1: 2, 2: 0, 3: 4, 4: 5, 5: 6, 6: 0, 7: 3}
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
    finished = False
    for _ in range(MAX_NEW):
        all_finished = torch.tensor([1 if finished else 0])
        dist.all_reduce(all_finished, op=dist.ReduceOp.MIN)
        if all_finished.item() == 1:
            break
        logits = model(torch.tensor(ids))
        if finished:
            continue
        token = int(logits.argmax())
        ids.append(token)
        finished = token == EOS
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

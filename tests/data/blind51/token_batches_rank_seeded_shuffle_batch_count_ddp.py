# verify: hang,error
"""Token-budget batches built after a shuffle drawn from a per-process random state.

Modelled on https://github.com/PaddlePaddle/models/pull/5121 ("Fix hung"): grouping sentences
into batches by token count after a shuffle changes how many tokens each batch holds, and so the
number of batches; when the shuffle is not seeded alike on every card, the cards get different
numbers of batches, and the one that finishes first leaves the others waiting in their
gradient synchronisation. Here each process seeds Python's `random` with `SEED + RANK` (for its
own augmentation noise), and the batch sampler's shuffle draws from that same global state: each
process builds another batch plan and takes every other batch of its own plan.
"""
import os
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SEED = 0
MAX_TOKENS = 16  # padded tokens per batch
LENGTHS = [3, 9, 4, 7, 2, 8, 5, 6, 9, 3, 7, 4, 8, 2, 6, 5, 9, 7, 3, 6]


class TokenBatchSampler:
    def __init__(self, lengths, max_tokens, rank, world_size):
        self.lengths, self.max_tokens = lengths, max_tokens
        self.rank, self.world_size = rank, world_size

    def __iter__(self):
        order = list(range(len(self.lengths)))
        random.shuffle(order)
        batches, cur, longest = [], [], 0
        for i in order:
            grown = max(longest, self.lengths[i])
            if cur and grown * (len(cur) + 1) > self.max_tokens:
                batches.append(cur)
                cur, grown = [], self.lengths[i]
            cur.append(i)
            longest = grown
        if cur:
            batches.append(cur)
        return iter(batches[self.rank::self.world_size])


def main():
    dist.init_process_group("gloo")
    random.seed(SEED + int(os.environ["RANK"]))
    torch.manual_seed(SEED)
    model = DDP(torch.nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sampler = TokenBatchSampler(LENGTHS, MAX_TOKENS, dist.get_rank(), dist.get_world_size())
    total = torch.zeros(1)
    for batch in sampler:
        x = torch.tensor([[LENGTHS[i] / 10 + random.gauss(0, 0.01)] for i in batch])
        loss = model(x).pow(2).mean()
        loss.backward()  # expect: BCL011
        opt.step()
        opt.zero_grad()
        total += loss.detach()
    dist.all_reduce(total)
    print("summed loss:", total.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

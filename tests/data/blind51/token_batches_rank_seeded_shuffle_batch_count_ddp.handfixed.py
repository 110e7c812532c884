# verify: ok
"""Hand fix of token_batches_rank_seeded_shuffle_batch_count_ddp.

As in https://github.com/PaddlePaddle/models/pull/5121, the batch shuffle gets its own generator
with a fixed seed (`random.Random(SEED)`), so every process builds the same batch plan; the plan
is also cut to a multiple of the world size before each process takes its share, so the counts
agree whatever the number of batches. The augmentation noise keeps its per-process seed.
"""
import os
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SEED = 0
MAX_TOKENS = 16
LENGTHS = [3, 9, 4, 7, 2, 8, 5, 6, 9, 3, 7, 4, 8, 2, 6, 5, 9, 7, 3, 6]


class TokenBatchSampler:
    def __init__(self, lengths, max_tokens, rank, world_size, seed):
        self.lengths, self.max_tokens = lengths, max_tokens
        self.rank, self.world_size = rank, world_size
        self.rng = random.Random(seed)

    def __iter__(self):
        order = list(range(len(self.lengths)))
        self.rng.shuffle(order)
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
        usable = len(batches) // self.world_size * self.world_size
        return iter(batches[:usable][self.rank::self.world_size])


def main():
    dist.init_process_group("gloo")
    random.seed(SEED + int(os.environ["RANK"]))
    torch.manual_seed(SEED)
    model = DDP(torch.nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sampler = TokenBatchSampler(LENGTHS, MAX_TOKENS, dist.get_rank(), dist.get_world_size(), SEED)
    total = torch.zeros(1)
    for batch in sampler:
        x = torch.tensor([[LENGTHS[i] / 10 + random.gauss(0, 0.01)] for i in batch])
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        total += loss.detach()
    dist.all_reduce(total)
    print("summed loss:", total.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

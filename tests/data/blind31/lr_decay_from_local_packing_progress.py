# verify: divergent check=LRS
"""Decay the learning rate with this process's own progress through its packed data.

Modelled on https://github.com/karpathy/nanochat/pull/857 ("Fix LR divergence across ranks in
SFT"): the learning rate multiplier was computed from `progress`, the fraction of the dataset the
rank's own loader had consumed, and one rank packs more short conversations over time, so its
progress runs ahead and its learning rate falls faster.

Each step packs whole conversations into a fixed token budget. Process 0's shard holds short
conversations (2 tokens, 8 per step), process 1's long ones (8 tokens, 2 per step). Both run the
same 5 steps under Fabric's DDP, but `progress = consumed / len(shard)` is per process, and so is
the learning rate set from it.
"""
import os

import torch
from lightning.fabric import Fabric

STEPS, TOKEN_BUDGET, BASE_LR = 5, 16, 0.1
CONVERSATION_TOKENS = [2, 8] * 24  # short conversations at even positions, long ones at odd
LRS = []


def packed_steps(shard, seed):
    g = torch.Generator().manual_seed(seed)
    consumed = 0
    for _ in range(STEPS):
        used = 0
        while consumed < len(shard) and used + shard[consumed] <= TOKEN_BUDGET:
            used += shard[consumed]
            consumed += 1
        tokens = torch.randn(TOKEN_BUDGET, 3, generator=g)
        tokens[used:] = 0.0
        yield tokens, consumed / len(shard)


def main():
    fabric = Fabric(accelerator="cpu", devices=int(os.environ.get("WORLD_SIZE", "1")), strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=BASE_LR)
    model, optimizer = fabric.setup(model, optimizer)
    shard = CONVERSATION_TOKENS[fabric.global_rank::fabric.world_size]
    for tokens, progress in packed_steps(shard, seed=fabric.global_rank):
        for group in optimizer.param_groups:
            group["lr"] = BASE_LR * (1.0 - progress)  # expect: BCL002
        LRS.append(round(optimizer.param_groups[0]["lr"], 6))
        loss = (model(tokens) - tokens.sum(dim=1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        fabric.backward(loss)
        optimizer.step()
    print(f"process {fabric.global_rank}: learning rates {LRS}", flush=True)
    fabric.barrier()


if __name__ == "__main__":
    main()

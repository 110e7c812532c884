# verify: hang
"""Gradient accumulation whose length each process derives from its own sequence lengths.

Modelled on huggingface/picotron#5 (https://github.com/huggingface/picotron/pull/5): the ranks
decide on their own when `require_backward_grad_sync` is on ("Rank 1 never synchronizes its
gradient"), and modelscope/FunASR#3472 (https://github.com/modelscope/FunASR/pull/3472): a
`no_sync()` condition that does not match the optimizer-step micro-batch on every rank.

With Lightning Fabric, each process accumulates micro-batches until it has seen about
`TOKENS_PER_STEP` tokens: `accum = ceil(TOKENS_PER_STEP / tokens per micro-batch)`, computed from
its own data. Micro-batches inside the accumulation run `fabric.backward` under
`fabric.no_backward_sync(model, enabled=True)`; the last one syncs (DDP's gradient all-reduce).
Process 0's sequences are twice as long, so it syncs every 2 micro-batches and process 1 every 4:
over 8 micro-batches their gradient all-reduces no longer pair.
"""
import math

import torch
from lightning.fabric import Fabric

TOKENS_PER_STEP = 64
SEQ_LEN = [32, 16]  # tokens per sequence in each process's shard
MICRO_BATCHES, BATCH = 8, 1


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = fabric.setup(model, optimizer)
    g = torch.Generator().manual_seed(fabric.global_rank)
    seq_len = SEQ_LEN[fabric.global_rank]
    micro = [torch.randn(BATCH, seq_len, 8, generator=g) for _ in range(MICRO_BATCHES)]
    accum = math.ceil(TOKENS_PER_STEP / (BATCH * seq_len))
    steps = 0
    for i, x in enumerate(micro):
        is_accumulating = (i + 1) % accum != 0
        with fabric.no_backward_sync(model, enabled=is_accumulating):
            loss = model(x).pow(2).mean() / accum
            fabric.backward(loss)  # expect: BCL011
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
            steps += 1
    total = fabric.all_reduce(torch.tensor([float(steps), 0.0, 0.0]), reduce_op="sum")
    fabric.print(f"optimizer steps across processes: {total[0].item():.0f}")


if __name__ == "__main__":
    main()

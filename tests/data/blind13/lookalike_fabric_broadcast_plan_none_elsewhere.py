# verify: ok
"""Look-alike: a value that is None off the main process, broadcast with Fabric's object broadcast.

The shard plan is drawn on the first process only and is `None` everywhere else, as in a broken
tensor broadcast; but `fabric.broadcast` sends a picklable Python object (through
`broadcast_object_list`), so `None` on the receiving processes is only a placeholder, replaced by
the first process's plan.
"""
import os
import random

import torch
from lightning.fabric import Fabric

FILES = [f"shard-{i}.bin" for i in range(6)]


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    plan = None
    if fabric.global_rank == 0:
        order = FILES[:]
        random.Random(7).shuffle(order)
        plan = {"order": order, "epochs": 2}
    plan = fabric.broadcast(plan, src=0)
    mine = plan["order"][fabric.global_rank::fabric.world_size]
    count = fabric.all_reduce(torch.tensor(float(len(mine))), reduce_op="sum")
    fabric.print(f"{int(count.item())} shards over {plan['epochs']} epochs")
    fabric.barrier()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()

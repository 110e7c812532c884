# verify: ok
"""Hand-fixed: the neighbours exchange their halo widths first and size each receive buffer with the
width the neighbour sends.
"""
import math
import os

import torch
import torch.distributed as dist

DT = 0.1
DX = 0.05
FIELD = torch.tensor([1.2, 1.1, 1.0, 0.9, 0.8, 0.7, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15])


def halo_width(speeds):
    return max(1, math.ceil(float(speeds.abs().max()) * DT / DX))


def exchange(slab, neighbour):
    width = halo_width(slab)
    outgoing = (slab[-width:] if neighbour > dist.get_rank() else slab[:width]).contiguous()
    their_width = torch.zeros(1, dtype=torch.long)
    size_send = dist.isend(torch.tensor([width]), dst=neighbour)
    dist.recv(their_width, src=neighbour)
    size_send.wait()
    incoming = torch.zeros(int(their_width.item()))
    send = dist.isend(outgoing, dst=neighbour)
    recv = dist.irecv(incoming, src=neighbour)
    send.wait()
    recv.wait()
    return incoming


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    slab = FIELD.chunk(world)[rank].clone()
    neighbour = 1 - rank
    for step in range(3):
        halo = exchange(slab, neighbour)
        slab = slab - 0.01 * (slab.mean() - halo.mean())
    total = slab.sum().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank}: field sum {total.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()

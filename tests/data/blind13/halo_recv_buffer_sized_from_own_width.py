# verify: error
"""Halo exchange whose receive buffer is sized with the process's own halo width, not its neighbour's.

Modelled on pytorch/pytorch#113376 (https://github.com/pytorch/pytorch/issues/113376): "Weird and
buggy batch_isend_irecv behavior", a receive buffer of another size than the matching send (a
partly filled buffer, or a hang). Each process owns a slab of a 1-D flow field and sends its
neighbour as many boundary cells as its own CFL condition asks for (`halo_width()`, from the
largest local speed); it posts the receive with that same width. The first slab holds the fast
inflow (width 3), the second the slow outflow (width 1).
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
    incoming = torch.zeros(width)
    send = dist.isend(outgoing, dst=neighbour)
    recv = dist.irecv(incoming, src=neighbour)  # expect: BCL007
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

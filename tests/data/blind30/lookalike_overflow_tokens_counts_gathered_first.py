# verify: ok
"""Look-alike: the overflow counts are all-gathered first, so a process posts an irecv only
when its peer will send and an isend only when it has tokens to send: every op has its match.

Tokens over an expert's capacity handed to the peer process with batch_isend_irecv.

Modelled on https://github.com/NVIDIA/nccl/issues/2130 (batch_isend_irecv hangs when one
process's batch holds an isend and an irecv and the peer's holds only the irecv). Each process
routes its tokens to its local expert, which takes at most CAPACITY of them; the tokens over
capacity are sent to the other process, padded to a fixed buffer. Every process posts the
irecv, but only a process that has overflow tokens posts the isend. The shard with the
high-scoring tokens belongs to one process, so the other never sends, and the irecv waiting for
its tokens never completes.
"""
import torch
import torch.distributed as dist

CAPACITY, DIM = 3, 4


def make_tokens(rank, world):
    g = torch.Generator().manual_seed(11)
    tokens = torch.randn(12, DIM, generator=g)
    scores = torch.linspace(1.0, 0.0, 12)  # the router's scores, highest first
    shard = slice(rank * 12 // world, (rank + 1) * 12 // world)
    routed = scores[shard] > 0.3
    return tokens[shard][routed]


def exchange_overflow(tokens, peer):
    keep, spill = tokens[:CAPACITY], tokens[CAPACITY:]
    counts = [torch.zeros(1, dtype=torch.long) for _ in range(dist.get_world_size())]
    dist.all_gather(counts, torch.tensor([min(len(spill), CAPACITY)]))
    incoming = int(counts[peer].item())
    ops = []
    inbox = torch.zeros(incoming, DIM)
    if incoming:
        ops.append(dist.P2POp(dist.irecv, inbox, peer))
    if len(spill):
        ops.append(dist.P2POp(dist.isend, spill[:CAPACITY].contiguous(), peer))
    if ops:
        for req in dist.batch_isend_irecv(ops):
            req.wait()
    return keep, inbox


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    peer = (rank + 1) % world
    expert = torch.nn.Linear(DIM, DIM)
    tokens = make_tokens(rank, world)
    keep, received = exchange_overflow(tokens, peer)
    out = expert(torch.cat([keep, received]))
    total = out.detach().abs().sum().reshape(1)
    dist.all_reduce(total)
    print(f"process {rank}: kept {len(keep)} tokens, total activation {total.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

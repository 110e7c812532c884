# verify: error
"""A sanity check on each process's own batch, `assert torch.isfinite(batch).all()`, before the
gradient all_reduce. Rank 1's second batch holds a NaN (a corrupt record), so rank 1 dies with an
AssertionError while rank 0 waits in the all_reduce it will never complete.

Modelled on the review of ByteDance-Seed/VeOmni#1076
(https://github.com/ByteDance-Seed/VeOmni/pull/1076): an assertion that fails on one rank makes
it skip the `dist.barrier()` every rank must reach, and the other rank blocks there until the gloo
timeout.
"""
import torch
import torch.distributed as dist


def load_batches(rank):
    batches = [torch.randn(4, 3) for _ in range(3)]
    if rank == 1:
        batches[1][2, 0] = float("nan")  # a corrupt record in this process's shard
    return batches


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    model = torch.nn.Linear(3, 1)
    for batch in load_batches(rank):
        assert torch.isfinite(batch).all(), "non-finite input"
        model.zero_grad()
        model(batch).pow(2).mean().backward()
        dist.all_reduce(model.weight.grad)  # expect: BCL005
        model.weight.grad /= world
    print(f"rank {rank}: done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

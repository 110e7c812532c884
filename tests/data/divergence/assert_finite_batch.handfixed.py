"""The processes agree whether the step's batches are all finite (all_reduce MIN of a flag) and skip
the step together when one is not."""
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
        finite = torch.tensor([int(torch.isfinite(batch).all())])
        dist.all_reduce(finite, op=dist.ReduceOp.MIN)
        if not finite.item():
            print(f"rank {rank}: skipping a step with a non-finite input")
            continue
        model.zero_grad()
        model(batch).pow(2).mean().backward()
        dist.all_reduce(model.weight.grad)
        model.weight.grad /= world
    print(f"rank {rank}: done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

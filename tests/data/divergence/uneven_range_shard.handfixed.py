"""Every process runs ceil(n / world) steps; a process without an example in the last step still
joins the all_reduce with a zero loss and a zero count."""
import math

import torch
import torch.distributed as dist

NUM_EXAMPLES = 7


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    data = torch.randn(NUM_EXAMPLES, 4)
    model = torch.nn.Linear(4, 1)
    my_examples = list(range(rank, NUM_EXAMPLES, world))
    total = torch.zeros(2)
    for step in range(math.ceil(NUM_EXAMPLES / world)):
        loss_and_count = torch.zeros(2)
        if step < len(my_examples):
            loss_and_count[0] = model(data[my_examples[step]]).pow(2).mean().detach()
            loss_and_count[1] = 1.0
        dist.all_reduce(loss_and_count)
        total += loss_and_count
    print(f"rank {rank}: mean loss {(total[0] / total[1]).item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

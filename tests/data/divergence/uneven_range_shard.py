# verify: error
"""Each process takes every world-th example, `range(rank, n, world)`, and runs one step per example
it holds, all-reducing the loss for logging. Seven examples over two processes: rank 0 runs four
steps and rank 1 three; rank 1 finishes and tears its process group down while rank 0 waits in its
fourth all_reduce (gloo: "Connection closed by peer").

Modelled on k2-fsa/snowfall#152 (https://github.com/k2-fsa/snowfall/issues/152): with
`total % world_size != 0` the partitions differ in length, and the node with the most utterances
hung at the end of the epoch in an all_reduce the others never made.
"""
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
    running = 0.0
    for step in range(len(my_examples)):
        loss = model(data[my_examples[step]]).pow(2).mean().detach()
        dist.all_reduce(loss)  # expect: BCL005
        running += loss.item() / world
    print(f"rank {rank}: mean loss {running / len(my_examples):.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

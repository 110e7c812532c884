# verify: hang
"""The node's sequence-parallel groups, created lazily when a process first meets a long sequence.

Modelled on https://github.com/vllm-project/llm-compressor/pull/2869 (the review of a helper that
calls `dist.new_group(...)` inside a context manager: `new_group` is collective over the whole
default group, even for ranks outside the new group, so a helper entered by only some ranks
hangs).

`node_group()` (`mod_parallel.py`) creates the node's group (both processes here) on its first
call and caches it; only a sequence longer than `MAX_LOCAL` is split over the node, so the program
calls it there, on the process holding that sequence. Process 0's first sequence is long, process
1's are all short: process 0 waits in `new_group` while process 1 is already in the gradient
all-reduce.
"""
import torch
import torch.distributed as dist

from mod_parallel import node_group, split_attention_context

MAX_LOCAL = 6
SEQUENCES = {
    0: [[0.1 * i for i in range(9)], [0.2, 0.4, 0.1], [0.3, 0.3]],
    1: [[0.5, 0.1, 0.2], [0.7, 0.2], [0.6, 0.6, 0.1, 0.2]],
}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    weight = torch.zeros(1, requires_grad=True)
    for values in SEQUENCES[rank]:
        tokens = torch.tensor(values)
        if len(tokens) > MAX_LOCAL:
            group = node_group()  # expect: BCL005
            context = split_attention_context(tokens, group)
        else:
            context = tokens.mean()
        loss = (weight * context - 1.0).pow(2).sum()
        loss.backward()
        dist.all_reduce(weight.grad)
        weight.grad /= world
        with torch.no_grad():
            weight -= 0.1 * weight.grad
        weight.grad.zero_()
    print(f"rank {rank}: weight {weight.item():.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

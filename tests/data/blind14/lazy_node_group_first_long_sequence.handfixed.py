# verify: ok
"""Hand-fixed: whether to split is agreed (any process with a long sequence), so every process
creates and uses the node group at the same step.

The broken program is `lazy_node_group_first_long_sequence.py` (modelled on https://github.com/vllm-project/llm-compressor/pull/2869).
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
        # The node splits when any of its processes holds a long sequence, and all of them
        # create (on the first such step) and use the group together.
        long_here = torch.tensor([int(len(tokens) > MAX_LOCAL)])
        dist.all_reduce(long_here, op=dist.ReduceOp.MAX)
        if long_here.item():
            group = node_group()
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

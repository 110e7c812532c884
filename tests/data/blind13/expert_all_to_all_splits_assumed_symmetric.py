# verify: error
"""Token dispatch with `all_to_all_single` whose output split sizes are assumed to equal the input's.

Modelled on pytorch/pytorch#117486 (https://github.com/pytorch/pytorch/issues/117486):
"all_to_all_single stuck when use specials output_split_sizes and input_split_sizes", answered
there as "a wrong usecase that split_sizes mismatch on different ranks". Each process routes its
own tokens to the two experts (expert e lives on process e) by the sign of the router score;
`dispatch()` sends `counts` tokens to each process but expects to receive `counts` from each one as
well, which holds only when the routing happens to be symmetric. The first process's batch sends 3
tokens to expert 1, the second's sends 1 token to expert 0.
"""
import os

import torch
import torch.distributed as dist

HIDDEN = 4
# router scores of each process's tokens: >= 0 goes to expert 0, < 0 to expert 1
SCORES = {
    0: [0.9, -0.2, 0.4, -0.7, -0.1],
    1: [-0.3, 0.6, -0.8, -0.5],
}


def dispatch(tokens, expert_of):
    order = torch.argsort(expert_of, stable=True)
    counts = torch.bincount(expert_of, minlength=dist.get_world_size()).tolist()
    received = torch.zeros(sum(counts), HIDDEN)
    dist.all_to_all_single(received, tokens[order], output_split_sizes=counts, input_split_sizes=counts)  # expect: BCL015
    return received


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    scores = torch.tensor(SCORES[rank])
    tokens = torch.arange(len(scores) * HIDDEN, dtype=torch.float32).reshape(len(scores), HIDDEN) + 100 * rank
    expert_of = (scores < 0).long()
    received = dispatch(tokens, expert_of)
    expert = torch.nn.Linear(HIDDEN, HIDDEN)
    out = expert(received).sum()
    total = out.detach().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank}: expert {rank} processed {received.shape[0]} tokens")
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()

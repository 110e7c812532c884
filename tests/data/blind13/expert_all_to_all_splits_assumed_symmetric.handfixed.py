# verify: ok
"""Hand-fixed: the token counts are exchanged first, so each process receives as many tokens from
each peer as that peer sends it.

An `all_to_all_single` of the per-destination counts (one integer per process) gives the output
split sizes of the token exchange, the usual two-step dispatch of expert-parallel MoE layers.
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
    send_counts = torch.bincount(expert_of, minlength=dist.get_world_size())
    recv_counts = torch.zeros_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    received = torch.zeros(int(recv_counts.sum()), HIDDEN)
    dist.all_to_all_single(
        received, tokens[order], output_split_sizes=recv_counts.tolist(), input_split_sizes=send_counts.tolist()
    )
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

# verify: hang,error
"""Speculative decoding on a sharded target whose every forward gathers the weight shards.

Modelled on huggingface/transformers#22242 (https://github.com/huggingface/transformers/pull/22242):
under ZeRO-3 every forward all-gathers the partitioned weights, so `generate()` needs
`synced_gpus=True` or the processes that stop early leave the others waiting in the gather. Here
each process decodes its own prompt with a draft model and verifies the drafts with the sharded
target; the number of verification rounds depends on how many drafts the target accepts, which
depends on the prompt: process 0's drafts are all accepted, process 1's mostly rejected.
"""
import torch
import torch.distributed as dist

VOCAB, DRAFT_LEN, MAX_NEW = 16, 3, 8
PROMPTS = [[0], [10]]


def target_table():
    table = torch.full((VOCAB, VOCAB), -5.0)
    table[torch.arange(VOCAB), (torch.arange(VOCAB) + 1) % VOCAB] = 5.0
    return table


def draft_next(token):
    return (token + 1) % VOCAB if token < 8 else (token + 3) % VOCAB


def target_logits(shard, tokens, world):
    parts = [torch.zeros_like(shard) for _ in range(world)]
    dist.all_gather(parts, shard)  # expect: BCL005
    table = torch.cat(parts)
    return table[torch.tensor(tokens)]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = torch.chunk(target_table(), world)[rank].clone()
    ids = list(PROMPTS[rank::world][0])
    rounds = 0
    while len(ids) - 1 < MAX_NEW:
        drafts = []
        for _ in range(DRAFT_LEN):
            drafts.append(draft_next((ids + drafts)[-1]))
        predicted = target_logits(shard, (ids + drafts)[-DRAFT_LEN - 1:], world).argmax(-1).tolist()
        accepted = 0
        while accepted < DRAFT_LEN and drafts[accepted] == predicted[accepted]:
            accepted += 1
        ids += drafts[:accepted] + [predicted[accepted]]
        rounds += 1
    print(f"process {rank}: {rounds} verification rounds, {ids}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

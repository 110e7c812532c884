# verify: divergent check=TOKENS
"""Vocab-parallel sampling where every process draws the next token from its own RNG stream.

Modelled on openai/gpt-oss#270 (https://github.com/openai/gpt-oss/issues/270): model-parallel
ranks each call `torch.multinomial()` on the same logits, and nothing makes them pick the same
token. Here the ranks start from the same seed, but each initialises its own shard of the output
head first, and the vocabulary of 11 splits into 6 and 5 rows: the shards consume different
amounts of the default generator, so the draws that follow differ.
"""
import torch
import torch.distributed as dist

VOCAB, DIM, STEPS, TEMPERATURE = 11, 8, 10, 1.0
TOKENS = []


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234)
    rows = torch.tensor_split(torch.arange(VOCAB), world)[rank]
    head = torch.randn(len(rows), DIM)
    width = max(len(r) for r in torch.tensor_split(torch.arange(VOCAB), world))
    embed = torch.randn(VOCAB, DIM, generator=torch.Generator().manual_seed(7))
    token = 3
    for _ in range(STEPS):
        local = torch.full((width,), float("-inf"))
        local[:len(rows)] = head @ embed[token]
        parts = [torch.empty(width) for _ in range(world)]
        dist.all_gather(parts, local)
        logits = torch.cat(parts)
        logits = logits[logits != float("-inf")]
        probs = torch.softmax(logits / TEMPERATURE, dim=-1)
        token = int(torch.multinomial(probs, 1))  # expect: BCL009
        TOKENS.append(token)
    print(f"process {rank}: {TOKENS}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

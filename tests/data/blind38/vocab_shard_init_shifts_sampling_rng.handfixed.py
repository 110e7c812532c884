# verify: ok check=TOKENS
"""Hand fix: the next token is drawn from a generator of its own, seeded alike on every
process, so the shard initialisation no longer shifts the draws.
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
    sampler = torch.Generator().manual_seed(99)
    token = 3
    for _ in range(STEPS):
        local = torch.full((width,), float("-inf"))
        local[:len(rows)] = head @ embed[token]
        parts = [torch.empty(width) for _ in range(world)]
        dist.all_gather(parts, local)
        logits = torch.cat(parts)
        logits = logits[logits != float("-inf")]
        probs = torch.softmax(logits / TEMPERATURE, dim=-1)
        token = int(torch.multinomial(probs, 1, generator=sampler))
        TOKENS.append(token)
    print(f"process {rank}: {TOKENS}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

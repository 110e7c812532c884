# verify: ok check=TOKENS
"""Look-alike: every process still samples from its own, shifted RNG stream, but the sampled
token is then broadcast from process 0, so all processes continue with process 0's token.
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
        choice = torch.multinomial(probs, 1)
        dist.broadcast(choice, src=0)
        token = int(choice)
        TOKENS.append(token)
    print(f"process {rank}: {TOKENS}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

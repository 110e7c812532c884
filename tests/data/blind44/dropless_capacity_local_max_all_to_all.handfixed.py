# verify: ok
"""Hand fix: the dropless capacity is agreed across processes (an all-reduce MAX) before it sizes the buffer.

Modelled on https://github.com/deepspeedai/DeepSpeed/issues/6809: with drop_tokens=False the
gating sets the capacity to the largest per-expert token count of the local batch; two processes
routing different batches get different capacities, so the dispatch all_to_all exchanges
buffers of different sizes and the job stalls.
"""
import torch
import torch.distributed as dist

D, E, TOKENS = 4, 2, 12


def top1_gating(logits, drop_tokens=False):
    expert = logits.argmax(dim=1)
    counts = torch.bincount(expert, minlength=E)
    if drop_tokens:
        return expert, 4
    capacity = counts.max().reshape(1)
    dist.all_reduce(capacity, op=dist.ReduceOp.MAX)
    return expert, int(capacity)


def dispatch(x, expert, capacity):
    buf = torch.zeros(E, capacity, D)
    for e in range(E):
        rows = x[expert == e][:capacity]
        buf[e, : rows.shape[0]] = rows
    return buf


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    gate = torch.nn.Linear(D, E)
    expert_ff = torch.nn.Linear(D, D)
    data = torch.Generator().manual_seed(1000 + dist.get_rank())  # this process's shard
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(TOKENS, D, generator=data)
            expert, capacity = top1_gating(gate(x))
            buf = dispatch(x, expert, capacity)
            recv = torch.empty_like(buf)
            dist.all_to_all_single(recv, buf)
            out = expert_ff(recv)
            back = torch.empty_like(out)
            dist.all_to_all_single(back, out)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: hang,error
"""Each process picks the MoE communication method from its own token count.

Modelled on the review of https://github.com/vllm-project/vllm-ascend/pull/4736: skipping the
all-reduce of num_tokens across DP ranks assumes every rank uses the capacity-bounded all_to_all
(MC2) path; a rank whose batch exceeds the capacity switches to the all-gather path while its
peers stay on all_to_all, and the collectives no longer match.
"""
import torch
import torch.distributed as dist
from lightning.fabric import Fabric

D, E, MC2_CAPACITY, MAX_TOKENS = 4, 2, 6, 16
BATCH_TOKENS = [[5, 4, 6], [6, 9, 3]]


def dispatch(fabric, h, route):
    if h.shape[0] <= MC2_CAPACITY:  # expect: BCL005
        buf = h.new_zeros(E, MC2_CAPACITY, D)
        for e in range(E):
            rows = h[route == e]
            buf[e, : rows.shape[0]] = rows
        recv = torch.empty_like(buf)
        dist.all_to_all_single(recv, buf)
        return recv.sum()
    padded = h.new_zeros(MAX_TOKENS, D)
    padded[: h.shape[0]] = h
    return fabric.all_gather(padded).sum()


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    data = torch.Generator().manual_seed(7 + fabric.global_rank)  # this process's requests
    total = 0.0
    for n in BATCH_TOKENS[fabric.global_rank]:
        h = torch.randn(n, D, generator=data)
        total += float(dispatch(fabric, h, torch.arange(n) % E))
    fabric.barrier()
    print(f"process {fabric.global_rank}: {total:.3f}")


if __name__ == "__main__":
    main()

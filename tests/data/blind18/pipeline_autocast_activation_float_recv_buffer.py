# verify: divergent check=BOUNDARY_DIGEST
"""A two-stage pipeline whose first stage runs under bf16 autocast and sends its activations as they are.

Modelled on pytorch/pytorch#81545 (https://github.com/pytorch/pytorch/issues/81545): `dist.recv`
received a tensor correctly only when it was sent as float32; tensors sent in another floating
dtype arrived in the receiver's float32 buffer as wrong values, without an error.

Here stage 0 (rank 0) computes the encoder under `torch.autocast("cpu", dtype=torch.bfloat16)`
when the run config enables mixed precision, so its activations are bfloat16; stage 1 (rank 1)
receives each micro-batch into `torch.empty(MICRO, HIDDEN)`, a float32 buffer shaped by the
pipeline schedule. Half of the buffer's bytes are filled with bf16 bit patterns and the rest keep
whatever `torch.empty` found. Both stages keep a digest of the activations that crossed the
boundary (what was sent, what was received); they should agree.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn

RUN_CONFIG = {"mixed_precision": os.environ.get("PIPE_MIXED_PRECISION", "bf16"), "micro_batches": 3}
MICRO, IN_DIM, HIDDEN = 4, 8, 16
BOUNDARY_DIGEST = None


def build_stage(rank: int) -> nn.Module:
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(IN_DIM, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, HIDDEN))
    head = nn.Sequential(nn.LayerNorm(HIDDEN), nn.Linear(HIDDEN, 1))
    return encoder if rank == 0 else head


def autocast_for(config: dict):
    enabled = config["mixed_precision"] == "bf16"
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled)


def micro_batches(n: int):
    g = torch.Generator().manual_seed(7)
    for _ in range(n):
        x = torch.randn(MICRO, IN_DIM, generator=g)
        yield x, x.sum(dim=1, keepdim=True)


def run_first_stage(encoder: nn.Module) -> float:
    digest = 0.0
    with torch.no_grad():
        for x, _ in micro_batches(RUN_CONFIG["micro_batches"]):
            with autocast_for(RUN_CONFIG):
                h = encoder(x)
            dist.send(h, dst=1)
            digest += float(h.float().abs().sum())
    return digest


def run_last_stage(head: nn.Module) -> tuple[float, torch.Tensor]:
    digest, loss = 0.0, torch.zeros(1)
    with torch.no_grad():
        for _, y in micro_batches(RUN_CONFIG["micro_batches"]):
            h = torch.empty(MICRO, HIDDEN)
            dist.recv(h, src=0)  # expect: BCL007
            digest += float(h.float().abs().sum())
            loss += nn.functional.mse_loss(head(h), y)
    return digest, loss


def main() -> None:
    global BOUNDARY_DIGEST
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    stage = build_stage(rank)
    if rank == 0:
        digest, loss = run_first_stage(stage), torch.zeros(1)
    else:
        digest, loss = run_last_stage(stage)
    dist.broadcast(loss, src=1)
    BOUNDARY_DIGEST = round(digest, 2)
    print(f"rank {rank}: boundary digest {BOUNDARY_DIGEST}, eval loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""The loss is broadcast from the last stage, the rank that computed it."""
import torch
import torch.distributed as dist


def is_last_stage():
    return dist.get_rank() == dist.get_world_size() - 1


def pipeline_step(x, y, stage0, stage1):
    """Stage 0 runs on rank 0 and sends its activations; the last stage computes the loss."""
    if dist.get_rank() == 0:
        dist.send(stage0(x).detach(), dst=1)
        return torch.zeros(1)  # no loss on this stage
    act = torch.zeros(x.shape[0], 4)
    dist.recv(act, src=0)
    return (stage1(act) - y).pow(2).mean().reshape(1)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    stage0, stage1 = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    with torch.no_grad():
        loss = pipeline_step(x, y, stage0, stage1)
    dist.broadcast(loss, src=dist.get_world_size() - 1)
    LOGGED_LOSS = loss.item()
    print(f"rank {dist.get_rank()} (last stage: {is_last_stage()}): loss {LOGGED_LOSS:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

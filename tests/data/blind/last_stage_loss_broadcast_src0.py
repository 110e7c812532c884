# verify: divergent
"""In a two-stage pipeline only the last stage computes the loss; the first stage keeps a
zero placeholder. To log the loss everywhere the program broadcasts it, but from rank 0 (the usual
logging rank), so every process ends up with rank 0's placeholder and the last stage's real loss is
overwritten.

Modelled on pytorch/torchtitan#547 "Loss=-1.0 ... in pipeline parallel"
(https://github.com/pytorch/torchtitan/issues/547) and #550 "PP UX/training confusion re: loss =
-1" (https://github.com/pytorch/torchtitan/issues/550): only the last pipeline rank has the loss,
rank 0 reports the -1 placeholder.
"""
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
    dist.broadcast(loss, src=0)  # expect: BCL009
    LOGGED_LOSS = loss.item()
    print(f"rank {dist.get_rank()} (last stage: {is_last_stage()}): loss {LOGGED_LOSS:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

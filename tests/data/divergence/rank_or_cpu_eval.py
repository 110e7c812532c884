# verify: hang
"""The script also runs without torch.distributed, where its rank is the string "cpu"; evaluation is
guarded by `rank == 0 or rank == "cpu"`. Under torchrun that is true on rank 0 only, and the
evaluation all-reduces the validation loss, so rank 0 waits alone.

Modelled on huggingface/transformers#1081 (https://github.com/huggingface/transformers/pull/1081):
evaluation ran only where `args.local_rank in [-1, 0]` and hung at a `torch.distributed.barrier()`
inside it that the other processes never reached.
"""
import torch
import torch.distributed as dist


def validation_loss(model, batches):
    total = torch.zeros(2)
    for inputs, targets in batches:
        total += torch.tensor([torch.nn.functional.mse_loss(model(inputs), targets).item(), 1.0])
    if dist.is_initialized():
        dist.all_reduce(total)
    return (total[0] / total[1]).item()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank() if dist.is_initialized() else "cpu"
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    for epoch in range(2):
        if rank == 0 or rank == "cpu":
            print(f"epoch {epoch}: val loss {validation_loss(model, batches):.3f}")  # expect: BCL005
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

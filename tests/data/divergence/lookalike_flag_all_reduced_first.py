# verify: ok
"""Correct: each process's early-stopping decision comes from its own validation loss, but the flag
is all-reduced (MAX) before anyone branches on it, so every process leaves the loop at the same
epoch. Shaped after the fix in ultralytics/yolov5#8345
(https://github.com/ultralytics/yolov5/pull/8345), which broadcasts the stop flag to every process."""
import torch
import torch.distributed as dist

VALIDATION_LOSSES = {0: [0.9, 0.7, 0.8, 0.6], 1: [0.9, 0.8, 0.7, 0.6]}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    best, epochs = float("inf"), 0
    for loss in VALIDATION_LOSSES[rank]:
        grad = torch.ones(3) * loss
        dist.all_reduce(grad)
        stop = torch.tensor([int(loss > best)])
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item():
            break
        best = min(best, loss)
        epochs += 1
    print(f"rank {rank}: trained {epochs} epochs")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

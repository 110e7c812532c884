# verify: hang
"""Resuming: each process checks for the last checkpoint on its own node's disk and, if found,
loads it and joins the broadcast of the training state. Only node 0 holds the file (simulated here
by one directory per rank, written by rank 0 alone), so rank 0 enters the broadcast and rank 1 goes
straight to the first training all_reduce.

Modelled on KempnerInstitute/KempnerForge#49
(https://github.com/KempnerInstitute/KempnerForge/issues/49): `train_state_path.exists()` on every
rank disagreed on a distributed file system, and the `broadcast_object_list` after `torch.load`
deadlocked.
"""
import os
import tempfile

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    root = os.path.join(tempfile.gettempdir(), f"resume-{os.environ['MASTER_PORT']}")
    node_disk = os.path.join(root, f"node{rank}")
    os.makedirs(node_disk, exist_ok=True)
    ckpt = os.path.join(node_disk, "last.pt")
    if rank == 0:  # the previous run saved from rank 0, onto node 0's disk
        torch.save({"step": 40, "lr": 0.01}, ckpt)
    state = {"step": 0, "lr": 0.1}
    if os.path.exists(ckpt):
        holder = [torch.load(ckpt)]
        dist.broadcast_object_list(holder, src=0)  # expect: BCL005
        state = holder[0]
    grad = torch.ones(4) * state["lr"]
    dist.all_reduce(grad)
    print(f"rank {rank}: resumed at step {state['step']}, grad {grad[0].item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

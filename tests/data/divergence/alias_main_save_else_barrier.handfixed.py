"""The main process saves; every process then meets at the same barrier."""
import os
import tempfile

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    main_process = rank == 0
    torch.manual_seed(rank)
    model = torch.nn.Linear(4, 1)
    out_dir = tempfile.mkdtemp()
    for epoch in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        if main_process:
            torch.save(model.state_dict(), os.path.join(out_dir, f"epoch{epoch}.pt"))
        dist.barrier()
        model.zero_grad()
    print(f"rank {rank}: done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

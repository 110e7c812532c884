# verify: hang
"""`main = rank == 0` is computed once; at each epoch end the main process saves while the others
wait at a barrier in the `else` arm. The main process never joins that barrier: it runs on into the
next epoch's all_reduce, so the two processes wait in different collectives.

Modelled on huggingface/accelerate#2690 (https://github.com/huggingface/accelerate/issues/2690):
`if accelerator.is_main_process: save ... else: accelerator.wait_for_everyone()` hung the GPUs
after the first save.
"""
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
        else:
            dist.barrier()  # expect: BCL005
        model.zero_grad()
    print(f"rank {rank}: done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

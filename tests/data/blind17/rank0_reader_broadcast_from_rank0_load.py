# verify: hang
"""Pretrained weights loaded with broadcast_from_rank0, but the loader returns early off rank 0.

Modelled on openai/guided-diffusion#68 (https://github.com/openai/guided-diffusion/issues/68),
"load_state_dict stuck! when load ckpt (multiGPU), it is stuck in load_state_dict()"; the
answer there: "Just delete `if dist.get_rank() == 0` in train_util.py when loading ckpt with
multi-GPUs" (the project's `load_state_dict` reads the file on rank 0 and broadcasts it, so every
rank must call it), and on pytorch/pytorch#125177
(https://github.com/pytorch/pytorch/issues/125177), where a training library "only loads
monolithic checkpoints on rank 0 and broadcasts to all other ranks".

`load_pretrained` reads the checkpoint file on rank 0 only (to spare the other processes the
memory and the disk reads) and hands it to
`set_model_state_dict(..., StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))`,
whose documentation says only rank 0 needs to hold the full state dict. The author took that to
mean only rank 0 needs to make the call, and returns early elsewhere.

Where the ranks part ways: `if rank != 0: return` before the call. `set_model_state_dict`
broadcasts the entries from rank 0 to the others, so rank 0 waits inside it while process 1 has
gone on to build the DistributedDataParallel wrapper and train.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.nn.parallel import DistributedDataParallel as DDP


def checkpoint_path():
    name = f"blind17-pretrained-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}.pt"
    return os.path.join(tempfile.gettempdir(), name)


def build_model():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def load_pretrained(model, path, rank):
    """Read the checkpoint once, on rank 0; broadcast_from_rank0 hands it to the other ranks."""
    if rank != 0:
        return
    state = torch.load(path, map_location="cpu", weights_only=True)
    set_model_state_dict(  # expect: BCL011
        model,
        state,
        options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True),
    )


def fine_tune(rank, path):
    torch.manual_seed(rank)  # fresh initialisation, replaced by the pretrained weights
    model = build_model()
    load_pretrained(model, path, rank)
    model = DDP(model)

    g = torch.Generator().manual_seed(10 + rank)
    x, y = torch.randn(16, 6, generator=g), torch.randint(0, 3, (16,), generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        loss = nn.functional.cross_entropy(model(x[step * 4:(step + 1) * 4]), y[step * 4:(step + 1) * 4])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    path = checkpoint_path()
    if rank == 0:
        torch.manual_seed(1234)  # the "pretrained" weights, written once for this job
        torch.save(build_model().state_dict(), path)
    dist.barrier()

    last_loss = fine_tune(rank, path)
    total = torch.tensor([last_loss])
    dist.all_reduce(total)
    if rank == 0:
        print(f"fine-tuned, mean last loss {total.item() / dist.get_world_size():.4f}")
        os.remove(path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

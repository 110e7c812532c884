# verify: ok
"""Hand fix of rank0_reader_broadcast_from_rank0_load: every rank calls the loader.

Modelled on openai/guided-diffusion#68 (https://github.com/openai/guided-diffusion/issues/68),
whose answer is to call the broadcasting loader on every rank, and on pytorch/pytorch#125177
(https://github.com/pytorch/pytorch/issues/125177). Rank 0 still reads the file alone; the other
ranks hand `set_model_state_dict(..., broadcast_from_rank0=True)` an empty dict and receive the
entries from rank 0 inside the call.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict
from torch.nn.parallel import DistributedDataParallel as DDP


def checkpoint_path():
    name = f"blind17-pretrained-fixed-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}.pt"
    return os.path.join(tempfile.gettempdir(), name)


def build_model():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def load_pretrained(model, path, rank):
    """Read the checkpoint once, on rank 0; broadcast_from_rank0 hands it to the other ranks."""
    state = torch.load(path, map_location="cpu", weights_only=True) if rank == 0 else {}
    set_model_state_dict(
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

# verify: hang,error
"""Prompt tuning under FSDP2: export the learned token embeddings only when they changed.

Modelled on https://github.com/EleutherAI/bergson/pull/380: gathering FSDP's sharded state is a
collective, so a save must be entered from every rank; a save that one rank skips hangs the rest.

The vocabulary's last two rows are the new prompt tokens, the only rows the batches use, so only
they change (plain SGD: a zero gradient leaves a row as it was). `fully_shard` splits the table
by rows: process 0 holds rows 0-3, process 1 rows 4-7. Each process compares a digest of its own
shard (`to_local()`) before and after training and skips the export when nothing changed: process
0 skips `get_model_state_dict(..., full_state_dict=True)`, whose all-gathers process 1 enters.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import fully_shard

VOCAB, NEW_TOKENS, DIM = 8, 2, 4
ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-export",
)


class PromptModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.head = nn.Linear(DIM, 3)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(dim=1))


def shard_digest(module):
    return sum(float(p.to_local().double().sum()) for p in module.parameters())


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = PromptModel()
    model.head.requires_grad_(False)
    fully_shard(model.embed)
    fully_shard(model)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    before = shard_digest(model.embed)
    gen = torch.Generator().manual_seed(dist.get_rank())
    for _ in range(4):
        ids = torch.randint(VOCAB - NEW_TOKENS, VOCAB, (6, 3), generator=gen)
        target = torch.randint(0, 3, (6,), generator=gen)
        loss = nn.functional.cross_entropy(model(ids), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if shard_digest(model.embed) != before:
        options = StateDictOptions(full_state_dict=True, cpu_offload=True)
        full = get_model_state_dict(model, options=options)  # expect: BCL011
        if full:
            os.makedirs(ROOT, exist_ok=True)
            torch.save(full["embed.weight"][-NEW_TOKENS:], os.path.join(ROOT, "prompt.pt"))
    dist.barrier()
    shutil.rmtree(ROOT, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: hang,error
"""A packed row that holds a single document makes `seqlens.max()` raise; the row is skipped.

Modelled on https://github.com/alibaba/Pai-Megatron-Patch/issues/717 (SFT sequence packing:
`RuntimeError` in `max()` when a micro-batch contains only one sequence, because the sequence
lengths are computed from the starts of the documents, `starts[1:] - starts[:-1]`, which is empty
for one document). Here the training loop catches the error and skips the row, as a robust loop
would; the row that holds one long document lies in one process's shard only, so that process
runs one DDP backward (a gradient all-reduce) fewer than the other.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SEQ = 8
# position ids of packed rows: a 0 starts a document
ROWS = [
    [0, 1, 2, 0, 1, 2, 3, 4], [0, 1, 0, 1, 2, 0, 1, 2],
    [0, 1, 2, 3, 0, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7],
    [0, 1, 2, 0, 1, 0, 1, 2], [0, 1, 0, 1, 2, 3, 0, 1],
]


def get_batch(position_ids):
    starts = (position_ids == 0).nonzero(as_tuple=True)[0]
    seqlens = starts[1:] - starts[:-1]
    max_seqlen = torch.max(seqlens.max(), position_ids.max() + 1)
    cu_seqlens = torch.cat([starts, torch.tensor([len(position_ids)])])
    return cu_seqlens, int(max_seqlen)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(SEQ, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    shard = ROWS[dist.get_rank()::dist.get_world_size()]
    trained = 0
    for row in shard:
        pos = torch.tensor(row)
        try:
            cu_seqlens, max_seqlen = get_batch(pos)
        except RuntimeError as err:
            print("skipping packed row:", err)
            continue
        x = pos.float().unsqueeze(0) / max_seqlen
        loss = model(x).pow(2).mean() * (len(cu_seqlens) - 1)
        loss.backward()  # expect: BCL011
        opt.step()
        opt.zero_grad()
        trained += 1
    dist.barrier()
    print("trained rows:", trained)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix of single_sequence_pack_cu_seqlens_error_skips_backward.

The sequence lengths are taken from the boundaries including the end of the row
(`diff(cat(starts, [len]))`), which is never empty, so a row holding one document is trained on
like any other and every process runs the same number of DDP backward passes.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SEQ = 8
ROWS = [
    [0, 1, 2, 0, 1, 2, 3, 4], [0, 1, 0, 1, 2, 0, 1, 2],
    [0, 1, 2, 3, 0, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7],
    [0, 1, 2, 0, 1, 0, 1, 2], [0, 1, 0, 1, 2, 3, 0, 1],
]


def get_batch(position_ids):
    starts = (position_ids == 0).nonzero(as_tuple=True)[0]
    cu_seqlens = torch.cat([starts, torch.tensor([len(position_ids)])])
    seqlens = cu_seqlens[1:] - cu_seqlens[:-1]
    return cu_seqlens, int(seqlens.max())


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(SEQ, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    shard = ROWS[dist.get_rank()::dist.get_world_size()]
    trained = 0
    for row in shard:
        pos = torch.tensor(row)
        cu_seqlens, max_seqlen = get_batch(pos)
        x = pos.float().unsqueeze(0) / max_seqlen
        loss = model(x).pow(2).mean() * (len(cu_seqlens) - 1)
        loss.backward()
        opt.step()
        opt.zero_grad()
        trained += 1
    dist.barrier()
    print("trained rows:", trained)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

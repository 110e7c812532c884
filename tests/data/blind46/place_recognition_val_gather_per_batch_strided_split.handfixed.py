# verify: ok
"""Hand fix: the database is encoded locally and gathered once, padded to one length.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/4175 ("Gather all
validation_step outputs on one machine": embeddings of every validation sample are needed
on one process to build a KD-tree and compute recall, gathered with `dist.all_gather` for
each batch). Here each process takes every world-size-th database entry (`db[rank::world]`),
so with an odd database one process has one more batch, and one more `all_gather`.

The fix encodes the whole shard first, pads it to the longest shard (every process knows
every shard's length) and gathers once; the padding rows are cut before the rows are put
back in database order, so the recall is computed against the whole database.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


def encode_database(model, database, batch_size=2):
    world, n = dist.get_world_size(), len(database)
    items = database[dist.get_rank()::world]
    emb = torch.cat([F.normalize(model(items[s:s + batch_size]), dim=1)
                     for s in range(0, len(items), batch_size)])
    longest = (n + world - 1) // world
    padded = torch.cat([emb, emb.new_zeros(longest - len(emb), emb.shape[1])])
    buckets = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(buckets, padded)
    out = emb.new_zeros(n, emb.shape[1])
    for r, part in enumerate(buckets):
        count = len(range(r, n, world))
        out[r::world] = part[:count]
    return out


@torch.no_grad()
def recall_at_1(model, database, queries, truth):
    db_emb = encode_database(model, database)
    q_emb = F.normalize(model(queries), dim=1)
    nearest = (q_emb @ db_emb.T).argmax(dim=1)
    return float((nearest == truth).float().mean())


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 3)
    database = torch.randn(13, 6)
    queries = database[:4] + 0.05 * torch.randn(4, 6)
    truth = torch.arange(4)
    print("recall@1", recall_at_1(model, database, queries, truth))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

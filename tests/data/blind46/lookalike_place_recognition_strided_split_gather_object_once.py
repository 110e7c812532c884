# verify: ok
"""Look-alike: strided, uneven database shards, encoded batch by batch, gathered once.

As in `place_recognition_val_gather_per_batch_strided_split`, each process takes every
world-size-th database entry (`db[rank::world]`, 7 and 6 of 13) and encodes it in batches of
two, one more batch on one process. The batch loop has no collective in it: the shard's
embeddings are gathered once, after the loop, with `all_gather_object`, which takes
objects of any size.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


@torch.no_grad()
def encode_database(model, database, batch_size=2):
    world = dist.get_world_size()
    items = database[dist.get_rank()::world]
    chunks = [F.normalize(model(items[s:s + batch_size]), dim=1)
              for s in range(0, len(items), batch_size)]
    shards = [None] * world
    dist.all_gather_object(shards, torch.cat(chunks))
    out = torch.zeros(len(database), chunks[0].shape[1])
    for r, shard in enumerate(shards):
        out[r::world] = shard
    return out


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 3)
    database = torch.randn(13, 6)
    queries = database[:4] + 0.05 * torch.randn(4, 6)
    with torch.no_grad():
        db_emb = encode_database(model, database)
        nearest = (F.normalize(model(queries), dim=1) @ db_emb.T).argmax(dim=1)
    print("recall@1", float((nearest == torch.arange(4)).float().mean()))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

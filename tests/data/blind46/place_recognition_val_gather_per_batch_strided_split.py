# verify: hang,error
"""Place-recognition validation that gathers database embeddings batch by batch.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/4175 ("Gather all
validation_step outputs on one machine": embeddings of every validation sample are needed
on one process to build a KD-tree and compute recall, gathered with `dist.all_gather` for
each batch). Here each process takes every world-size-th database entry (`db[rank::world]`),
so with an odd database one process has one more batch, and one more `all_gather`.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


def encode_database(model, items, batch_size=2):
    world = dist.get_world_size()
    gathered = []
    for start in range(0, len(items), batch_size):
        emb = F.normalize(model(items[start:start + batch_size]), dim=1)
        buckets = [torch.zeros_like(emb) for _ in range(world)]
        dist.all_gather(buckets, emb)  # expect: BCL005
        gathered.extend(buckets)
    return torch.cat(gathered)


@torch.no_grad()
def recall_at_1(model, database, queries, truth):
    shard = database[dist.get_rank()::dist.get_world_size()]
    db_emb = encode_database(model, shard)
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

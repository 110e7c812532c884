# verify: divergent check=REDUCED
"""Each process collects its loss terms into a dict in the order its own batch produced them, then
averages them across processes with one all_reduce per key in that order. The orders differ
(rank 0's shard has a box target first, rank 1's a class target), so the reductions pair unrelated terms:
no error, every rank just logs different, wrong averages.

Modelled on facebookresearch/maskrcnn-benchmark#309
(https://github.com/facebookresearch/maskrcnn-benchmark/issues/309), `reduce_loss_dict` reducing a
dict's values in its own key order on every process, and mosaicml/composer#2513
(https://github.com/mosaicml/composer/issues/2513), where per-rank key orders summed norms of
different layers.
"""
import torch
import torch.distributed as dist

ANNOTATIONS = ["box", "cls", "cls", "box"]  # the targets of the data set, in file order
WEIGHTS = {"box": 2.0, "cls": 5.0}
REDUCED = {}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = ANNOTATIONS[rank * 2:(rank + 1) * 2]
    losses = {}
    for kind in shard:  # a loss term per kind of target, in the order the batch produced them
        losses[kind] = torch.tensor([WEIGHTS[kind] * (1.0 + rank)])
    for name, value in losses.items():
        dist.all_reduce(value)  # expect: BCL005
        REDUCED[name] = round(value.item() / world, 4)
    print(f"rank {rank}: {REDUCED}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: hang
"""The dataset is built inside `torch_distributed_zero_first(LOCAL_RANK)` (a context manager
imported from another module of the program, the YOLOv5 idiom), and the build also computes class
weights over every process's labels with an all_reduce. Local rank 0 runs the block first and
reaches the all_reduce while the other process still waits at the context manager's first barrier.

Modelled on the `torch_distributed_zero_first` helper discussed in ultralytics/ultralytics#6532
(https://github.com/ultralytics/ultralytics/issues/6532) and hukaixuan19970627/yolov5_obb#266
(https://github.com/hukaixuan19970627/yolov5_obb/issues/266); the dataset built inside it must
stay local.
"""
import os

import torch
import torch.distributed as dist

from mod_distctx import torch_distributed_zero_first

NUM_CLASSES = 3


def class_weights(labels):
    counts = torch.bincount(labels, minlength=NUM_CLASSES).float()
    dist.all_reduce(counts)
    return counts.sum() / (NUM_CLASSES * counts.clamp(min=1))


def build_dataset(rank):
    g = torch.Generator().manual_seed(rank)
    labels = torch.randint(0, NUM_CLASSES, (20,), generator=g)
    feats = torch.randn(20, 4, generator=g)
    return feats, labels


def main():
    dist.init_process_group("gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    with torch_distributed_zero_first(local_rank):
        feats, labels = build_dataset(dist.get_rank())
        weights = class_weights(labels)  # expect: BCL005
    print(f"rank {dist.get_rank()}: class weights {weights.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: error
"""Sequence accuracy averaged by a hand-written MeanMetric whose state a numpy bool promotes.

Modelled on modelscope/ms-swift#9550 (https://github.com/modelscope/ms-swift/issues/9550) and its
fix modelscope/ms-swift#9551 (https://github.com/modelscope/ms-swift/pull/9551): `MeanMetric.compute()`
builds the all-reduce tensor with `torch.tensor([self.state, self.count])` and lets torch infer the
dtype. Token-level accuracy adds Python floats, but sequence-level accuracy (used for batches whose
targets are whole sequences) adds `np.all(...)`, a `numpy.bool_`, which turns the state into
`numpy.float64`. Only rank 1's share holds such a batch: its tensor is float64, rank 0's float32.
"""
import numpy as np
import torch
import torch.distributed as dist


class MeanMetric:
    def __init__(self):
        self.state = 0.0
        self.count = 0

    def update(self, values):
        for v in values:
            self.state += v
            self.count += 1

    def compute(self):
        tensor = torch.tensor([self.state, self.count])
        dist.all_reduce(tensor)  # expect: BCL007
        return (tensor[0] / tensor[1]).item()


def compute_acc(preds, labels, seq_level):
    mask = labels != -100
    if seq_level:
        return [np.all(p[m] == l[m]) for p, l, m in zip(preds, labels, mask)]
    return [float((preds[mask] == labels[mask]).mean())]


# (preds, labels, seq_level); dealt BATCHES[rank::world]
BATCHES = [
    (np.array([[1, 2, 3], [4, 5, 6]]), np.array([[1, 2, -100], [4, 0, 6]]), False),
    (np.array([[2, 2, 2], [3, 3, 3]]), np.array([[2, 2, 2], [3, -100, 1]]), False),
    (np.array([[7, 8, 9], [1, 1, 1]]), np.array([[7, 8, 9], [1, 1, 0]]), False),
    (np.array([[5, 5, 0], [6, 6, 6]]), np.array([[5, 5, -100], [6, 6, 6]]), True),
]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    acc = MeanMetric()
    for preds, labels, seq_level in BATCHES[rank::world]:
        acc.update(compute_acc(preds, labels, seq_level))
    value = acc.compute()
    if rank == 0:
        print(f"accuracy {value:.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand-fixed twin of kmeans_local_assign_converged.py: convergence is agreed by all ranks.

Modelled on NVIDIA/nvalchemi-toolkit#150 (https://github.com/NVIDIA/nvalchemi-toolkit/pull/150):
the number of points whose assignment changed is all-reduced, and the loop stops only when no
point moved on any rank, so every rank runs the same iterations.
"""
import torch
import torch.distributed as dist

K, DIM, MAX_ITER = 3, 2, 20
SEED = 3


def load_shard(rank: int) -> torch.Tensor:
    """Stand-in for reading this rank's rows of the embedding file."""
    g = torch.Generator().manual_seed(SEED + rank)
    centers = torch.tensor([[0.0, 0.0], [4.0, 0.0], [2.0, 3.0]])
    which = torch.randint(0, K, (40,), generator=g)
    spread = 0.6 if rank == 0 else 1.4
    return centers[which] + spread * torch.randn(40, DIM, generator=g)


class KMeans:
    def __init__(self, k: int, max_iter: int):
        self.k, self.max_iter = k, max_iter
        self.centroids = None
        self.iterations = 0

    def fit(self, points: torch.Tensor) -> "KMeans":
        centroids = points[: self.k].clone()
        dist.broadcast(centroids, src=0)
        prev = None
        for it in range(self.max_iter):
            assign = torch.cdist(points, centroids).argmin(dim=1)
            sums = torch.zeros(self.k, points.shape[1]).index_add_(0, assign, points)
            counts = torch.bincount(assign, minlength=self.k).float()
            dist.all_reduce(sums)
            dist.all_reduce(counts)
            centroids = sums / counts.clamp(min=1).unsqueeze(1)
            self.iterations = it + 1
            moved = torch.tensor([len(assign) if prev is None else int((assign != prev).sum())])
            dist.all_reduce(moved)
            if moved.item() == 0:
                break
            prev = assign
        self.centroids = centroids
        return self


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = KMeans(K, MAX_ITER).fit(load_shard(rank))
    inertia = torch.cdist(load_shard(rank), model.centroids).min(dim=1).values.pow(2).sum()
    dist.all_reduce(inertia)
    if rank == 0:
        print(f"{model.iterations} iterations, inertia {inertia.item():.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Look-alike of kmeans_local_assign_converged.py: the loop stops on the centroids' shift.

The same k-means with a rank-varying shard and a `break` inside the loop of all_reduces, but the
test reads `shift`, the largest move of a centroid, and the centroids are computed from the
all-reduced sums and counts: the value, and so the iteration that breaks, is the same on every
rank.
"""
import torch
import torch.distributed as dist

K, DIM, MAX_ITER = 3, 2, 20
SEED = 3
TOL = 1e-4


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
        for it in range(self.max_iter):
            assign = torch.cdist(points, centroids).argmin(dim=1)
            sums = torch.zeros(self.k, points.shape[1]).index_add_(0, assign, points)
            counts = torch.bincount(assign, minlength=self.k).float()
            dist.all_reduce(sums)
            dist.all_reduce(counts)
            new = sums / counts.clamp(min=1).unsqueeze(1)
            shift = (new - centroids).norm(dim=1).max()
            centroids = new
            self.iterations = it + 1
            if shift < TOL:
                break
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

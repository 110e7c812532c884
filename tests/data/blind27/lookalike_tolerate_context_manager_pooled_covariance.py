# verify: ok
"""Look-alike: the same `tolerate(LinAlgError)` around an all-reduce, but the error can only come after it.

As in tolerate_context_manager_swallows_cholesky_all_reduce.py, one recording in process 1's
shard has a dead sensor and the whole step sits inside `with tolerate(LinAlgError):`. Here the
processes first sum their batch covariances with `dist.all_reduce`, and the Cholesky factor is
taken of that sum, the same matrix on every process: it raises everywhere or nowhere (here
nowhere, process 0's rows fill the dead column), so no process can skip the all-reduce.
"""
import contextlib

import torch
import torch.distributed as dist


@contextlib.contextmanager
def tolerate(*errors):
    try:
        yield
    except errors as exc:
        print(f"[process {dist.get_rank()}] batch skipped: {type(exc).__name__}")


def recordings():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(48, 6, generator=g)
    x[24:32, 3] = 0.0  # recording 3: sensor 3 was unplugged
    return x


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    x = recordings()
    share = x.chunk(world)[rank]
    log_dets = []
    for batch in share.split(8):
        with tolerate(torch.linalg.LinAlgError):
            cov = batch.T @ batch
            dist.all_reduce(cov)
            chol = torch.linalg.cholesky(cov / (len(batch) * world))
            log_dets.append((2 * chol.diagonal().log().sum()).item())
    dist.barrier()
    print(f"[process {rank}] log-det of the pooled batches: {log_dets}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

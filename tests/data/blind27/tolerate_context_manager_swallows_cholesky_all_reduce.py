# verify: hang,error
"""A user's `tolerate(...)` context manager swallows a per-batch error raised before an all-reduce.

Modelled on https://github.com/OPM/opm-simulators/pull/3545: collective communication happened
inside a try/catch clause, an exception raised on some processes only made them skip it, and
the processes then waited at different collective calls forever.

Each process estimates a whitening statistic (the log-determinant of its batch covariance, from
a Cholesky factor) and averages it with `dist.all_reduce`, all inside `with tolerate(LinAlgError):`
so that a bad batch is skipped. One recording in process 1's shard has a dead sensor (a column of
zeros): its covariance is singular, `torch.linalg.cholesky` raises there only, the context manager
swallows the error, and process 1 skips that batch's all-reduce. It runs one all-reduce fewer
than process 0 and reaches the final barrier while process 0 still waits in its last all-reduce.
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
            cov = batch.T @ batch / len(batch)
            chol = torch.linalg.cholesky(cov)
            stats = torch.stack([2 * chol.diagonal().log().sum(), torch.tensor(1.0)])
            dist.all_reduce(stats)  # expect: BCL005
            log_dets.append((stats[0] / stats[1]).item())
    dist.barrier()
    print(f"[process {rank}] mean log-det per batch: {log_dets}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: hang,error
"""Resume from the newest step that has this process's shard, falling back to an older one.

Modelled on https://github.com/facebookresearch/metaseq/pull/158 ("load last good checkpoint when
corrupted checkpoint is passed": a checkpoint with missing shards is skipped and an older one is
loaded). Here each process looks only for its own shard: the previous job was killed while it
saved step 4, after shard 0 was written and before shard 1. Process 0 finds its shard of step 4
and resumes there; process 1 falls back to step 2. Both train until step 6, so process 1 runs two
more gradient all-reduces than process 0, which is already waiting at the final barrier.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist

TOTAL_STEPS = 6


def run_dir():
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    return os.path.join(tempfile.gettempdir(), f"blind39-{addr}-{port}-shards")


def shard_path(root, step, index):
    return os.path.join(root, f"step-{step}", f"shard-{index}.pt")


def write_atomic(obj, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def simulate_preempted_run(root, world_size):
    """Step 2 was saved whole; the job was killed during step 4's save, after shard 0."""
    for step in (2, 4):
        for index in range(world_size):
            if step == 4 and index > 0:
                break
            torch.manual_seed(100 * step + index)
            write_atomic({"step": step, "weight": torch.randn(1, 4)}, shard_path(root, step, index))


def latest_loadable_step(root, index):
    steps = sorted((int(name.split("-")[1]) for name in os.listdir(root)), reverse=True)
    for step in steps:
        if os.path.exists(shard_path(root, step, index)):
            return step
    return 0


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    root = run_dir()
    simulate_preempted_run(root, world_size)
    dist.barrier()

    model = torch.nn.Linear(4, 1, bias=False)
    start = latest_loadable_step(root, rank)
    if start:
        model.weight.data.copy_(torch.load(shard_path(root, start, rank))["weight"])
    print(f"rank {rank}: resuming at step {start}")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    gen = torch.Generator().manual_seed(7)
    for step in range(start, TOTAL_STEPS):
        x, y = torch.randn(8, 4, generator=gen), torch.randn(8, 1, generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        dist.all_reduce(model.weight.grad)  # expect: BCL005
        model.weight.grad /= world_size
        opt.step()

    dist.barrier()
    shutil.rmtree(root, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Look-alike: a per-step watchdog (SIGALRM) that only counts and reports slow steps.

Modelled on https://github.com/jundot/omlx/pull/3040 ("exit rank when pipeline stalls
mid-request": a watchdog that gives up on a rank whose step makes no progress). This watchdog
only records that a step ran over its budget: the alarm handler appends a timestamp and returns,
so the remote fetch on process 1 finishes late and every process still runs one all-reduce per
batch.
"""
import signal
import time

import torch
import torch.distributed as dist

STEP_BUDGET_S = 0.3
RECORDS = [{"value": float(i), "remote": i == 5} for i in range(10)]


SLOW_STEPS = []


def on_alarm(signum, frame):
    SLOW_STEPS.append(time.monotonic())


def fetch(record):
    if record["remote"]:
        time.sleep(0.6)  # object store round trip
    value = record["value"]
    return torch.tensor([[value]]), torch.tensor([[3.0 * value + 1.0]])


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    signal.signal(signal.SIGALRM, on_alarm)

    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    for record in RECORDS[rank::world_size]:
        signal.setitimer(signal.ITIMER_REAL, STEP_BUDGET_S)  # the local part of the step only
        try:
            x, y = fetch(record)
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat)
        torch.nn.utils.vector_to_parameters(flat / world_size, [p.grad for p in model.parameters()])
        opt.step()

    print(f"rank {rank}: done, {len(SLOW_STEPS)} steps over budget")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

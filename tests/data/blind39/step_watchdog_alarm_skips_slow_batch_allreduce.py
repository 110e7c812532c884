# verify: hang,error
"""A per-step watchdog (SIGALRM) abandons a step that overruns its budget and skips the batch.

Modelled on https://github.com/jundot/omlx/pull/3040 ("exit rank when pipeline stalls
mid-request": a watchdog that gives up on a rank whose step makes no progress). Here the watchdog
raises `StepTimeout` inside the local part of the step (fetch, forward, backward; the collective
is left to the process group's own timeout) and the loop moves on to the next batch. Records marked
remote take 0.6 s to fetch against a budget of 0.3 s, and the only remote record lies in process
1's stripe: process 1 abandons that step before its gradient all-reduce, process 0 does not, so
process 0 ends one all-reduce ahead, waiting for a partner that has left the loop.
"""
import signal
import time

import torch
import torch.distributed as dist

STEP_BUDGET_S = 0.3
RECORDS = [{"value": float(i), "remote": i == 5} for i in range(10)]


class StepTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise StepTimeout()


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
    skipped = 0
    for record in RECORDS[rank::world_size]:
        signal.setitimer(signal.ITIMER_REAL, STEP_BUDGET_S)  # the local part of the step only
        try:
            x, y = fetch(record)
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            signal.setitimer(signal.ITIMER_REAL, 0)
            flat = torch.cat([p.grad.flatten() for p in model.parameters()])
            dist.all_reduce(flat)  # expect: BCL005
            torch.nn.utils.vector_to_parameters(flat / world_size, [p.grad for p in model.parameters()])
            opt.step()
        except StepTimeout:
            skipped += 1
            print(f"rank {rank}: step watchdog fired, batch skipped")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    print(f"rank {rank}: done, {skipped} batches skipped")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix: a batch abandoned by the step watchdog still joins the gradient all-reduce, with zeros.

Modelled on https://github.com/jundot/omlx/pull/3040 ("exit rank when pipeline stalls
mid-request": a watchdog that gives up on a rank whose step makes no progress). Here the watchdog
raises `StepTimeout` inside the local part of the step (fetch, forward, backward; the collective
is left to the process group's own timeout) and the loop moves on to the next batch. Records marked
remote take 0.6 s to fetch against a budget of 0.3 s, and the only remote record lies in process
1's stripe. Process 1 abandons that batch's local work but contributes a zero gradient to the
all-reduce, so both processes run one all-reduce per batch.
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
        opt.zero_grad()
        try:
            x, y = fetch(record)
            torch.nn.functional.mse_loss(model(x), y).backward()
        except StepTimeout:
            skipped += 1
            print(f"rank {rank}: step watchdog fired, batch contributes no gradient")
            for p in model.parameters():
                p.grad = torch.zeros_like(p)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat)
        torch.nn.utils.vector_to_parameters(flat / world_size, [p.grad for p in model.parameters()])
        opt.step()

    print(f"rank {rank}: done, {skipped} batches skipped")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

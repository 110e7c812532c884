# verify: hang,error
"""Leave the training loop at the next batch boundary once SIGTERM has set a stop flag.

Modelled on https://github.com/ai2cm/ace/pull/1407 ("Agree a batch boundary across ranks so a
preempted job leaves the training loop together"). The scheduler's notice reaches every process
at the same moment (here a timer 1 s after a common barrier), and each process reads its flag
after fetching its next batch, just before the gradient all-reduce. Process 1's records live in
remote storage (0.4 s per fetch), so it spends the steps fetching while process 0 waits inside
the all-reduce: process 1 sees the flag at its boundary and leaves, process 0 reads its flag only
after an all-reduce that nobody joins any more.
"""
import os
import signal
import threading
import time

import torch
import torch.distributed as dist

STEPS = 8
RECORDS = [{"value": float(i), "remote": i % 2 == 1} for i in range(16)]
stop_requested = False


def on_sigterm(signum, frame):
    global stop_requested
    stop_requested = True


def fetch(record):
    if record["remote"]:
        time.sleep(0.4)
    v = record["value"]
    return torch.tensor([[v]]), torch.tensor([[0.5 * v]])


def main():
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    signal.signal(signal.SIGTERM, on_sigterm)
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)

    dist.barrier()
    notice = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    notice.start()
    shard = RECORDS[rank::world_size]
    for step in range(STEPS):
        x, y = fetch(shard[step % len(shard)])
        if stop_requested:
            print(f"rank {rank}: preempted, leaving at step {step}")
            break
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(flat)  # expect: BCL005
        torch.nn.utils.vector_to_parameters(flat / world_size, [p.grad for p in model.parameters()])
        opt.step()

    notice.cancel()
    torch.save(model.state_dict(), os.devnull)  # the emergency checkpoint
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

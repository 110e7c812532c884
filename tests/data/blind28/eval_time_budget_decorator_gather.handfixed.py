# verify: ok
"""An evaluation pass under a wall-clock budget, each process reading its own clock.

Hand fix: `evaluate()` stops when any process is out of time (`accelerator.reduce` of the flag, sum),
so every process stops at the same batch.


Modelled on https://github.com/QMCPACK/qmcpack/pull/460: a run-time limit checked by every process
on its own clock let processes make different decisions about continuing the loop, which hung the
run until the decision was broadcast.

`@time_budget(1.5)` starts a clock when `evaluate()` is called and hands it an `out_of_time()`
check; `evaluate()` stops at the first batch that finds the budget spent and gathers each batch's
errors with `accelerator.gather_for_metrics`.  Before the call each process loads its own
validation shard: process 1's holds long documents and takes about a second, so its clock starts
a second after process 0's.  The batches themselves cost the same (each gather keeps the two in
step), so process 0 runs out of budget two or three batches before process 1, which gathers alone.
"""
import functools
import time

import torch
from accelerate import Accelerator


def time_budget(seconds):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            deadline = time.monotonic() + seconds
            return fn(*args, out_of_time=lambda: time.monotonic() > deadline, **kwargs)
        return wrapper
    return decorate


def load_eval_shard(process_index):
    g = torch.Generator().manual_seed(5 + process_index)
    long_documents = 10 if process_index == 1 else 0
    time.sleep(0.1 * long_documents)  # reading and tokenising this process's shard
    return [torch.randn(4, 3, generator=g) for _ in range(8)]


@time_budget(1.5)
def evaluate(accelerator, model, batches, out_of_time):
    errors = []
    for x in batches:
        if accelerator.reduce(torch.tensor([float(out_of_time())]), reduction="sum").item() > 0:
            break
        with torch.no_grad():
            err = (model(x).squeeze(1) - x.sum(dim=1)).abs()
        time.sleep(0.2)  # decoding
        errors.append(accelerator.gather_for_metrics(err))
    return torch.cat(errors).mean().item(), len(errors)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = accelerator.prepare(torch.nn.Linear(3, 1))
    batches = load_eval_shard(accelerator.process_index)
    mae, seen = evaluate(accelerator, accelerator.unwrap_model(model), batches)
    accelerator.wait_for_everyone()
    print(f"process {accelerator.process_index}: MAE {mae:.3f} over {seen} batches")
    accelerator.end_training()


if __name__ == "__main__":
    main()

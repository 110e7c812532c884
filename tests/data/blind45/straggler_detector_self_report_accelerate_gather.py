# verify: hang,error
"""Straggler detector that reports through `accelerator.gather` only when this process is slow.

Shape of flagos-ai/FlagScale#1215 (https://github.com/flagos-ai/FlagScale/pull/1215): a
`StragglerDetector` records per-section timings each step and produces a cross-process report.
Here `record()` compares this process's data-wait time with its own running median and, when it
is more than 3 times slower, gathers every process's time to name the straggler. Only the
process whose shard holds slow-to-decode records enters the gather; the other goes on to its
next backward (DDP's gradient all-reduce).
"""
import statistics
import time

import torch
from accelerate import Accelerator

SHARDS = [[1] * 10, [1, 1, 1, 1, 30, 1, 1, 1, 1, 1]]  # decode cost per record, in 10 ms units


class StragglerDetector:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.history = []

    def record(self, seconds):
        if len(self.history) >= 3 and seconds > 3 * statistics.median(self.history):
            times = self.accelerator.gather(torch.tensor([seconds]))  # expect: BCL005
            print(f"straggler report: {times.tolist()}", flush=True)
        self.history.append(seconds)


def main():
    accelerator = Accelerator(cpu=True)
    costs = SHARDS[accelerator.process_index % len(SHARDS)]
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    detector = StragglerDetector(accelerator)
    for cost in costs:
        start = time.perf_counter()
        time.sleep(0.01 * cost)  # decode this record
        x = torch.ones(4, 8) * cost
        detector.record(time.perf_counter() - start)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

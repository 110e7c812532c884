# verify: ok
"""Hand fix of straggler_detector_self_report_accelerate_gather.

Every process gathers its data-wait time every step and the straggler test reads the gathered
tensor, the same on every process, so the gather is never skipped. Modelled on
flagos-ai/FlagScale#1215 (https://github.com/flagos-ai/FlagScale/pull/1215).
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
        times = self.accelerator.gather(torch.tensor([seconds]))
        slowest = times.max().item()
        if len(self.history) >= 3 and slowest > 3 * statistics.median(self.history):
            print(f"straggler report: {times.tolist()}", flush=True)
        self.history.append(slowest)


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

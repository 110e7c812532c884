# verify: ok
"""Look-alike: a straggler detector that gathers on a step count, and warns locally.

The gather runs every fourth step on every process (a step counter that every process
advances alike); this process's own slowness only decides a local warning, printed without
any collective.
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

    def record(self, step, seconds):
        if len(self.history) >= 3 and seconds > 3 * statistics.median(self.history):
            print(f"process {self.accelerator.process_index} slow: {seconds:.3f} s", flush=True)
        self.history.append(seconds)
        if step % 4 == 3:
            times = self.accelerator.gather(torch.tensor([max(self.history[-4:])]))
            print(f"slowest data wait per process: {times.tolist()}", flush=True)


def main():
    accelerator = Accelerator(cpu=True)
    costs = SHARDS[accelerator.process_index % len(SHARDS)]
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    detector = StragglerDetector(accelerator)
    for step, cost in enumerate(costs):
        start = time.perf_counter()
        time.sleep(0.01 * cost)  # decode this record
        x = torch.ones(4, 8) * cost
        detector.record(step, time.perf_counter() - start)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

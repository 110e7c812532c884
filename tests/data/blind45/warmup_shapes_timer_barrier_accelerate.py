# verify: hang,error
"""Throughput timer that starts with a barrier once this process has seen every shape.

Shape of NVIDIA/Megatron-LM#742 (https://github.com/NVIDIA/Megatron-LM/issues/742): timers
started with `start(barrier=True)`, a barrier before each timed section so that the timings
line up across processes. Here timing begins after a warm-up that lasts until this process has
met every padded sequence length once (each new shape pays a one-off cost, as a compiled or
autotuned kernel would); each process's shard brings the lengths in its own order, so the
processes leave warm-up at different steps and the timer's barrier meets the other process's
backward.
"""
import time

import torch
from accelerate import Accelerator

BUCKETS = (16, 32, 64)
SHARDS = [[16, 32, 64, 16, 32, 64, 16, 32], [16, 16, 16, 32, 32, 16, 64, 32]]


class Timer:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.total, self.start_time = 0.0, None

    def start(self, barrier=False):
        if barrier:
            self.accelerator.wait_for_everyone()  # expect: BCL005
        self.start_time = time.perf_counter()

    def stop(self):
        self.total += time.perf_counter() - self.start_time


def main():
    accelerator = Accelerator(cpu=True)
    lengths = SHARDS[accelerator.process_index % len(SHARDS)]
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)
    timer, seen, tokens = Timer(accelerator), set(), 0
    for length in lengths:
        warm = seen >= set(BUCKETS)
        seen.add(length)
        if warm:
            timer.start(barrier=True)
        x = torch.linspace(0, 1, length).unsqueeze(1)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        if warm:
            timer.stop()
            tokens += length
    print(f"{tokens / max(timer.total, 1e-9):.0f} tokens/s after warm-up", flush=True)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

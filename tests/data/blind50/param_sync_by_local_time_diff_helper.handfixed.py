# verify: ok
"""Hand fix of param_sync_by_local_time_diff_helper: the averaging is triggered by the step
count, which every process shares (each shard holds the same number of records), so every
process averages at the same steps; the clock is only reported.

https://github.com/rwth-i6/returnn/issues/318
"""
import time

import torch
import torch.distributed as dist


class StepAverager:
    def __init__(self, model, every_steps):
        self.model = model
        self.every_steps = every_steps
        self.steps = 0

    def maybe_sync(self):
        self.steps += 1
        if self.steps % self.every_steps != 0:
            return False
        for p in self.model.parameters():
            dist.all_reduce(p.data)
            p.data /= dist.get_world_size()
        return True


dist.init_process_group("gloo")
torch.manual_seed(0)
lengths = [8, 80] * 16  # records of two lengths, interleaved
shard = lengths[dist.get_rank()::dist.get_world_size()]
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
averager = StepAverager(model, every_steps=4)
syncs = 0
start = time.monotonic()
for n in shard:
    time.sleep(n * 1e-3)  # reading and decoding a record costs time in proportion to its length
    seq = torch.randn(n, 8)
    loss = model(seq).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    syncs += averager.maybe_sync()
print(f"{len(shard)} steps, {syncs} averagings, {time.monotonic() - start:.2f} s")
dist.destroy_process_group()

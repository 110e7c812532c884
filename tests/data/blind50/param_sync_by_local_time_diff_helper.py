# verify: hang,error
"""Local SGD whose parameter averaging is triggered by a time difference instead of a step
count ("sync every N seconds"), each process reading its own clock. The process whose shard
holds the long records is slower, the other finishes its records after fewer averagings, and the
slow process is left waiting in the all-reduce of `TimeDiffAverager.maybe_sync`.

Shape of the report: rwth-i6/returnn#318 ("Horovod: sync by time-diff, not by step",
`horovod_param_sync_time_diff`), done naively with a per-process clock.
https://github.com/rwth-i6/returnn/issues/318
"""
import time

import torch
import torch.distributed as dist


class TimeDiffAverager:
    def __init__(self, model, every_s):
        self.model = model
        self.every_s = every_s
        self.last = time.monotonic()

    def maybe_sync(self):
        if time.monotonic() - self.last < self.every_s:
            return False
        for p in self.model.parameters():
            dist.all_reduce(p.data)  # expect: BCL005
            p.data /= dist.get_world_size()
        self.last = time.monotonic()
        return True


dist.init_process_group("gloo")
torch.manual_seed(0)
lengths = [8, 80] * 16  # records of two lengths, interleaved
shard = lengths[dist.get_rank()::dist.get_world_size()]
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
averager = TimeDiffAverager(model, every_s=0.25)
syncs = 0
for n in shard:
    time.sleep(n * 1e-3)  # reading and decoding a record costs time in proportion to its length
    seq = torch.randn(n, 8)
    loss = model(seq).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    syncs += averager.maybe_sync()
print(f"{len(shard)} steps, {syncs} averagings")
dist.destroy_process_group()

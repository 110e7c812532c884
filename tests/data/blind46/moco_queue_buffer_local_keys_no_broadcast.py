# verify: divergent check=QUEUE_DIGEST
"""MoCo negatives queue kept as a module buffer, enqueued with this process's keys only.

Modelled on https://github.com/bl0/moco/issues/15 ("Why broadcast_buffers=False in
train.py?": the queue is a buffer, DDP is told not to broadcast buffers, so each process
keeps its own queue and updates it by itself). The keys are not gathered before they are
enqueued, so each process's queue holds its own keys and the queues (the negatives every
loss is computed against) drift apart while DDP keeps the weights equal.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class MoCoHead(torch.nn.Module):
    def __init__(self, dim=4, size=16):
        super().__init__()
        self.encoder = torch.nn.Linear(8, dim)
        self.register_buffer("queue", F.normalize(torch.ones(size, dim), dim=1))
        self.register_buffer("ptr", torch.zeros((), dtype=torch.long))

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        n = keys.shape[0]
        slots = (self.ptr + torch.arange(n)) % self.queue.shape[0]
        self.queue[slots] = keys  # expect: BCL002
        self.ptr.copy_((self.ptr + n) % self.queue.shape[0])

    def forward(self, x_q, x_k):
        q = F.normalize(self.encoder(x_q), dim=1)
        with torch.no_grad():
            k = F.normalize(self.encoder(x_k), dim=1)
        negatives = q @ self.queue.clone().detach().T
        logits = torch.cat([(q * k).sum(1, keepdim=True), negatives], dim=1) / 0.2
        self._dequeue_and_enqueue(k)
        return F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long))


def main():
    global QUEUE_DIGEST
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(MoCoHead(), broadcast_buffers=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(30 + dist.get_rank())
    for step in range(4):
        x = torch.randn(4, 8, generator=gen)
        loss = model(x + 0.1 * torch.randn(4, 8, generator=gen), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
    QUEUE_DIGEST = round(float(model.module.queue.sum()), 4)
    print("queue digest", QUEUE_DIGEST)
    dist.destroy_process_group()


QUEUE_DIGEST = None

if __name__ == "__main__":
    main()

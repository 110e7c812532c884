# verify: ok
"""Hand fix of streaming_diloco_fragment_by_local_step: a batch with no labelled record still
counts as an inner step (its loss is a zero that keeps the graph), so every process counts the
same local steps and syncs the same fragments at the same steps.

https://github.com/meta-pytorch/torchft/pull/233
"""
import torch
import torch.distributed as dist


class StreamingDiLoCo:
    def __init__(self, model, sync_every):
        self.fragments = [list(m.parameters()) for m in model if list(m.parameters())]
        self.anchors = [[p.detach().clone() for p in f] for f in self.fragments]
        self.outer = [torch.optim.SGD(a, lr=0.7, momentum=0.9, nesterov=True) for a in self.anchors]
        self.sync_every = sync_every
        self.local_step = 0

    def step(self):
        self.local_step += 1
        if self.local_step % self.sync_every == 0:
            self._sync((self.local_step // self.sync_every) % len(self.fragments))

    def _sync(self, f):
        pseudo = torch.cat([(a - p.detach()).flatten() for a, p in zip(self.anchors[f], self.fragments[f])])
        dist.all_reduce(pseudo)
        pseudo /= dist.get_world_size()
        offset = 0
        for a, p in zip(self.anchors[f], self.fragments[f]):
            a.grad = pseudo[offset:offset + a.numel()].view_as(a)
            offset += a.numel()
        self.outer[f].step()
        for a, p in zip(self.anchors[f], self.fragments[f]):
            p.data.copy_(a.data)


dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
x = torch.randn(64, 8)
labels = torch.randint(0, 3, (64,))
labels[16:24:2] = -100  # unlabelled records, all in one batch of one shard
xs, ys = x[dist.get_rank()::dist.get_world_size()], labels[dist.get_rank()::dist.get_world_size()]
inner = torch.optim.AdamW(model.parameters(), lr=1e-3)
diloco = StreamingDiLoCo(model, sync_every=2)
for i in range(0, len(xs), 4):
    yb = ys[i:i + 4]
    logits = model(xs[i:i + 4])
    if (yb != -100).sum() == 0:
        loss = logits.sum() * 0.0
    else:
        loss = torch.nn.functional.cross_entropy(logits, yb, ignore_index=-100)
    loss.backward()
    inner.step()
    inner.zero_grad()
    diloco.step()
print(f"{diloco.local_step} local steps, {diloco.local_step // diloco.sync_every} outer syncs")
dist.destroy_process_group()

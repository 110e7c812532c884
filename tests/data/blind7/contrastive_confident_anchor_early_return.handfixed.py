# verify: ok
"""Hand fix of contrastive_confident_anchor_early_return: every rank joins the gather.

A rank without a confident anchor contributes a zero prototype with a count of 0; only the
prototypes with a non-zero count enter the queue, and that rank's contrastive term is zero.

Original docstring: pixel-contrastive loss that returns a zero loss when a rank has no confident
anchor.

Modelled on Haochen-Wang409/U2PL#16 (https://github.com/Haochen-Wang409/U2PL/issues/16):
"when we compute contrastive loss on different GPU, sometimes there are not any qualified query
on some particular GPUs, contrastive losses are returns very fast on these GPUs ... resulting in
a bug in DDP, and we will not get any output since then".

`PrototypeContrast.__call__` keeps the features whose pseudo-label confidence passes a threshold
as anchors and returns `feats.sum() * 0` when there are none; otherwise it all-gathers the mean
anchor of every rank (`concat_all_gather`) into a memory queue. Crop 5 of the data is faint
(low contrast); the strided split gives it to rank 1 as its third batch: the classifier is unsure
of every pixel, no anchor qualifies, and rank 1 goes on to the gradient all-reduce while rank 0
waits in the gather.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F

DIM, CLASSES, QUEUE, THRESH = 6, 4, 8, 0.6
GAIN = [4.0, 4.0, 4.0, 4.0, 4.0, 0.01, 4.0, 4.0]  # contrast of each crop; crop 5 is faint


def concat_all_gather(x):
    buckets = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(buckets, x)
    return torch.cat(buckets)


class PrototypeContrast:
    def __init__(self):
        self.queue = torch.zeros(QUEUE, DIM)
        self.ptr = 0

    def __call__(self, feats, logits):
        conf = logits.softmax(-1).max(-1).values
        anchors = feats[conf > THRESH]
        proto = anchors.mean(0, keepdim=True) if anchors.shape[0] else feats.new_zeros(1, DIM)
        counts = concat_all_gather(torch.tensor([float(anchors.shape[0])]))
        keys = concat_all_gather(proto.detach())[counts > 0]
        n = keys.shape[0]
        self.queue[(self.ptr + torch.arange(n)) % QUEUE] = keys
        self.ptr = (self.ptr + n) % QUEUE
        if anchors.shape[0] == 0:
            return feats.sum() * 0.0
        sim = F.normalize(anchors, dim=1) @ F.normalize(self.queue, dim=1).T
        return -sim.logsumexp(dim=1).mean()


def load_crop(index):
    g = torch.Generator().manual_seed(index)
    x = torch.randn(5, DIM, generator=g) * GAIN[index]
    return x, torch.randint(0, CLASSES, (5,), generator=g)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    encoder = torch.nn.Linear(DIM, DIM)
    head = torch.nn.Linear(DIM, CLASSES, bias=False)
    params = list(encoder.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.01)
    contrast = PrototypeContrast()
    for step, index in enumerate(range(rank, len(GAIN), dist.get_world_size())):
        x, y = load_crop(index)
        feats = encoder(x)
        logits = head(feats)
        loss = F.cross_entropy(logits, y) + 0.1 * contrast(feats, logits)
        opt.zero_grad()
        loss.backward()
        for p in params:
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()
        print(f"rank {rank} step {step}: loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

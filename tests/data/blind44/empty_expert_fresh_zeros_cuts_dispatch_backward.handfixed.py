# verify: ok
"""Hand fix: the expert always runs on its (zero-padded) buffer, so the gradient path stays on every process.

Modelled on https://github.com/PaddlePaddle/PaddleFormers/pull/3010: when no token was routed to
a process's expert, the expert returned a new empty tensor; the gradient path through the
dispatch/combine all_to_all was cut on that process only, it finished its backward early, and
the others waited in the backward all_to_all until the timeout. Tokens are hash-routed
(token id % experts), one expert per process, each process on its own shard of sequences.
"""
import torch
import torch.distributed as dist

D, E, CAP = 4, 2, 4
SHARDS = [[[1, 2, 3, 4], [2, 4, 6, 8]], [[3, 5, 2, 1], [4, 6, 8, 2]]]


class AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.empty_like(x)
        dist.all_to_all_single(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, grad):
        out = torch.empty_like(grad)
        dist.all_to_all_single(out, grad.contiguous())
        return out


class HashMoE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(16, D)
        self.local_expert = torch.nn.Linear(D, D)

    def run_expert(self, recv, received):
        return self.local_expert(recv)

    def forward(self, ids):
        h = self.embed(ids)
        route = ids % E
        buf = h.new_zeros(E, CAP, D)
        for e in range(E):
            rows = h[route == e][:CAP]
            buf = buf.index_put((torch.tensor([e]), torch.arange(rows.shape[0])), rows)
        counts = torch.bincount(route, minlength=E)
        received = torch.empty_like(counts)
        dist.all_to_all_single(received, counts)
        out = AllToAll.apply(self.run_expert(AllToAll.apply(buf), int(received.sum())))
        mixed = torch.zeros_like(h)
        for e in range(E):
            n = int((route == e).sum())
            mixed = mixed.index_put((torch.nonzero(route == e).flatten(),), out[e, :n])
        return h + mixed


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = HashMoE()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for seq in SHARDS[dist.get_rank()]:
        loss = model(torch.tensor(seq)).pow(2).mean()
        loss.backward()
        for p in model.embed.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        opt.zero_grad()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: hang,error
"""Token-budget batches built globally, shuffled with a seed drawn from a per-process generator.

Modelled on https://github.com/pytorch/audio/pull/3068 ("`BucketizeBatchSampler` may return
different iter_list in different node if `shuffle` is `True`, which will cause DDP training
hang forever"). The batch sampler shuffles every sequence, packs the shuffled order into
batches under a token budget and hands each process every second batch, a scheme that gives
both processes the same number of batches only when they shuffle alike. Its seed defaults to
a draw from torch's default generator, which the script seeds per process (`100 + rank`) so
that the noise augmentation differs between processes. The two shuffles differ, so do the
packed batch lists, and one process runs a DDP step more than the other. What parts the
processes: a value, the seed each draws from its own generator.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Sampler

MAX_TOKENS = 48
VOCAB = 32


def sequence_lengths():
    g = torch.Generator().manual_seed(7)
    return torch.randint(3, 17, (40,), generator=g).tolist()


class GlobalBucketBatches(Sampler):
    def __init__(self, lengths, max_tokens, rank, world, seed=None):
        self.lengths, self.max_tokens = lengths, max_tokens
        self.rank, self.world = rank, world
        self.seed = seed if seed is not None else int(torch.randint(0, 2**31 - 1, ()).item())
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def batches(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        out, current, longest = [], [], 0
        for i in torch.randperm(len(self.lengths), generator=g).tolist():
            longest_if_added = max(longest, self.lengths[i])
            if current and longest_if_added * (len(current) + 1) > self.max_tokens:
                out.append(current)
                current, longest_if_added = [], self.lengths[i]
            current.append(i)
            longest = longest_if_added
        if current:
            out.append(current)
        out = out[: len(out) - len(out) % self.world]  # whole rounds only
        return out[self.rank :: self.world]

    def __iter__(self):
        return iter(self.batches())

    def __len__(self):
        return len(self.batches())


class Sequences(torch.utils.data.Dataset):
    def __init__(self, lengths):
        g = torch.Generator().manual_seed(3)
        self.rows = [torch.randint(0, VOCAB, (n,), generator=g) for n in lengths]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def pad(rows):
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(100 + rank)  # per-process augmentation noise

    lengths = sequence_lengths()
    sampler = GlobalBucketBatches(lengths, MAX_TOKENS, rank, world)
    loader = DataLoader(Sequences(lengths), batch_sampler=sampler, collate_fn=pad)

    model = DDP(torch.nn.Sequential(torch.nn.Embedding(VOCAB, 8), torch.nn.Linear(8, VOCAB)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    steps = 0
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for tokens in loader:
            noisy = torch.where(torch.rand(tokens.shape) < 0.1, torch.randint_like(tokens, VOCAB), tokens)
            logits = model(noisy)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten())
            opt.zero_grad()
            loss.backward()  # expect: BCL011
            opt.step()
            steps += 1
    print(f"rank {rank}: {steps} steps")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

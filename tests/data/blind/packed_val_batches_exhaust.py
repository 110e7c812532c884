# verify: error
"""Validation packs each process's variable-length samples into fixed-length rows and iterates the
packed batches to exhaustion, with a collective in every step (here an all_reduce of the running
loss, standing in for FSDP's per-forward all-gather). The two processes' samples pack into a
different number of batches, so one leaves the loop while the other waits in the next collective.

Modelled on PrimeIntellect-ai/prime-rl#2515 "Validation loop deadlocks with FSDP due to
unsynchronized iteration" (https://github.com/PrimeIntellect-ai/prime-rl/issues/2515) and
pytorch/torchtitan#1618 "Validation loop hangs"
(https://github.com/pytorch/torchtitan/issues/1618).
"""
import torch
import torch.distributed as dist

SEQ_LEN = 8
ROWS = 2


def pack(samples, seq_len=SEQ_LEN, rows=ROWS):
    """Concatenate the samples and cut them into `rows x seq_len` batches (the tail is dropped)."""
    stream = torch.cat(samples)
    per_batch = seq_len * rows
    for start in range(0, len(stream) - per_batch + 1, per_batch):
        yield stream[start:start + per_batch].view(rows, seq_len)


class Validator:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def run(self, samples):
        total = torch.zeros(2)
        for batch in pack(samples):
            loss = self.model(batch.float()).pow(2).mean()
            total += torch.stack([loss, torch.tensor(1.0)])
            dist.all_reduce(total)  # expect: BCL005
        return (total[0] / total[1]).item()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(10 + rank)
    samples = [torch.randint(0, 5, (int(n),)) for n in torch.randint(3, 14, (12,), generator=g)]
    torch.manual_seed(0)
    model = torch.nn.Linear(SEQ_LEN, 1)
    print(f"rank {rank}: {sum(len(s) for s in samples)} tokens, val {Validator(model).run(samples):.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

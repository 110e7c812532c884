# verify: ok
"""Each step the processes all-reduce (MIN) whether they still have a batch, and all leave the
loop together when any process runs out; the loss is summed once after the loop."""
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
        batches = pack(samples)
        while True:
            batch = next(batches, None)
            has_data = torch.tensor([0 if batch is None else 1])
            dist.all_reduce(has_data, op=dist.ReduceOp.MIN)
            if not has_data.item():
                break
            loss = self.model(batch.float()).pow(2).mean()
            total += torch.stack([loss, torch.tensor(1.0)])
        dist.all_reduce(total)
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

# verify: ok
"""Look-alike: each process packs its own documents and gets its own number of rows.

Process 0's documents fill three rows of 8 tokens, process 1's one, which resembles the uneven
packed-row counts that hang a training loop. The number of steps is agreed first with
`fabric.all_reduce(..., reduce_op="min")` and every process runs exactly that many backward
passes, so the surplus rows are left out everywhere: correct.
"""
import torch
from lightning.fabric import Fabric

SEQ = 8
DOC_LENGTHS = [6, 3, 5, 4, 7, 2, 6]


def pack_full_rows(lengths, seq):
    tokens = [n / seq for n in lengths for _ in range(n)]
    return [torch.tensor(tokens[i:i + seq]) for i in range(0, len(tokens) - seq + 1, seq)]


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(SEQ, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = fabric.setup(model, opt)
    rows = pack_full_rows(DOC_LENGTHS[fabric.global_rank::fabric.world_size], SEQ)
    steps = int(fabric.all_reduce(torch.tensor(len(rows)), reduce_op="min").item())
    for row in rows[:steps]:
        loss = model(row.unsqueeze(0)).pow(2).mean()
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
    fabric.print("rows here:", len(rows), "steps:", steps)
    fabric.barrier()


if __name__ == "__main__":
    main()

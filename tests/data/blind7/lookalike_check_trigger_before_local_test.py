# verify: ok
"""Look-alike of token_budget_or_check_trigger: the local test still sits in an `or`.

`if accelerator.check_trigger() or over_budget: break` evaluates the all-reduce first, on every
process; the process over budget has already called `set_trigger()`, so `check_trigger()` is
true everywhere and the `or` never decides alone.
"""
import torch
from accelerate import Accelerator

TOKEN_BUDGET = 60
LENGTHS = [[6, 5, 7, 6, 5, 6, 7, 5, 6, 6, 5, 7], [12, 14, 11, 13, 12, 14, 13, 12, 11, 14, 12, 13]]


def batches(lengths):
    g = torch.Generator().manual_seed(sum(lengths))
    for n in lengths:
        yield torch.randn(n, 4, generator=g)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = accelerator.prepare(model, optimizer)
    tokens_seen = 0
    for x in batches(LENGTHS[accelerator.process_index]):
        tokens_seen += x.shape[0]
        over_budget = tokens_seen >= TOKEN_BUDGET
        if over_budget:
            accelerator.set_trigger()
        if accelerator.check_trigger() or over_budget:
            break
        loss = model(x).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    seen = accelerator.reduce(torch.tensor([float(tokens_seen)]), reduction="sum")
    accelerator.print(f"tokens seen: {seen.item():.0f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

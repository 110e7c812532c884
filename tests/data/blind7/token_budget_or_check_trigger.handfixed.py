# verify: ok
"""Hand fix of token_budget_or_check_trigger: `check_trigger()` alone decides the stop.

Every process calls `check_trigger()` after its own `set_trigger()`, as accelerate documents,
so all processes leave the loop on the same step.

Original docstring: stop on a token budget with accelerate's trigger API, short-circuited by the
local test.

Modelled on underworldcode/underworld3#628 (https://github.com/underworldcode/underworld3/pull/628):
"a collective behind a predicate on rank-local data ... these guards read as ordinary control
flow", and OPM/opm-simulators#7190 (https://github.com/OPM/opm-simulators/pull/7190): "Several
rank-local boolean decisions ... gate or bound collective operations, but were used without
first being reduced across ranks".

Each process counts the tokens of its own batches and calls `accelerator.set_trigger()` once
over the budget, as the breakpoint API is meant to be used; but the stop test is written
`if over_budget or accelerator.check_trigger(): break`, so the process over budget leaves the
loop without calling `check_trigger()` (an all-reduce). Process 1's sequences are longer, so it
is over budget first; process 0 then calls `check_trigger()` alone.
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
        if accelerator.check_trigger():
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

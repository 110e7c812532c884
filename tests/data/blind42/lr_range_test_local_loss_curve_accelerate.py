# verify: divergent check=LR
"""A learning-rate range test run under Accelerate, each process picking the learning rate from
its own loss curve.

Modelled on https://github.com/fastai/fastai/issues/3688 (`learn.lr_find` does not work in a
distributed setup, raised while moving a training script to Accelerate; the reporter calls
`lr_find` at the start of every round and trains with the suggested rate; the advice was to find
the rate outside the distributed setup). Here each process runs the range test on a copy of the
unwrapped model, away from DDP's gradient averaging, over its own batches, and takes the steepest
descent of its own loss curve; the shard whose features were not standardised diverges at a
smaller rate, so the processes go on training the DDP model with different learning rates.
"""
import copy

import torch
from accelerate import Accelerator

START_LR, END_LR, NUM_ITER = 1e-4, 1.0, 24
FEATURE_SCALE = [1.0, 3.0]  # the second shard's features were not standardised
LR = None


def shard_batches(shard):
    g = torch.Generator().manual_seed(50 + shard)
    x = torch.randn(128, 8, generator=g) * FEATURE_SCALE[shard % 2]
    y = x @ torch.linspace(-1, 1, 8).unsqueeze(1) + 0.2 * torch.randn(128, 1, generator=g)
    return list(zip(x.split(16), y.split(16)))


def lr_range_test(model, batches):
    probe = copy.deepcopy(model)
    opt = torch.optim.SGD(probe.parameters(), lr=START_LR)
    mult = (END_LR / START_LR) ** (1 / (NUM_ITER - 1))
    lrs, losses, smooth = [], [], None
    for i in range(NUM_ITER):
        lr = START_LR * mult**i
        for group in opt.param_groups:
            group["lr"] = lr
        xb, yb = batches[i % len(batches)]
        loss = torch.nn.functional.mse_loss(probe(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        value = min(loss.item(), 1e6)
        smooth = value if smooth is None else 0.7 * smooth + 0.3 * value
        lrs.append(lr)
        losses.append(smooth)
    slopes = torch.tensor(losses).diff()
    return lrs[int(slopes.argmin()) + 1]  # expect: BCL002


def main():
    global LR
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 1)
    model, opt = accelerator.prepare(net, torch.optim.SGD(net.parameters(), lr=START_LR))
    batches = shard_batches(accelerator.process_index)
    LR = round(lr_range_test(accelerator.unwrap_model(model), batches), 8)
    print(f"process {accelerator.process_index}: suggested lr {LR}")
    for group in opt.param_groups:
        group["lr"] = LR
    for epoch in range(2):
        for xb, yb in batches:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

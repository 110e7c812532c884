# verify: ok check=LR
"""Hand fix of lr_range_test_local_loss_curve_accelerate: each process still probes its own copy
over its own batches, but the smoothed loss curves are averaged over the processes
(`accelerator.reduce(..., reduction="mean")`) before the steepest descent is taken, so every
process trains with the same learning rate.

Modelled on https://github.com/fastai/fastai/issues/3688.
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


def lr_range_test(accelerator, model, batches):
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
    curve = accelerator.reduce(torch.tensor(losses), reduction="mean")
    return lrs[int(curve.diff().argmin()) + 1]


def main():
    global LR
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 1)
    model, opt = accelerator.prepare(net, torch.optim.SGD(net.parameters(), lr=START_LR))
    batches = shard_batches(accelerator.process_index)
    LR = round(lr_range_test(accelerator, accelerator.unwrap_model(model), batches), 8)
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

# verify: ok
"""Hand fix: split with `apply_padding=True`, so every process computes the same step count.

Modelled on https://github.com/bghira/SimpleTuner/pull/1391: the images of an aspect bucket were
split between processes without `apply_padding`, so with an odd number of images each process
computed a different `max_train_steps`; the process with more steps waited forever in
`accelerator.gather()` after the others had left the training loop.
"""
import math

import torch
from accelerate import Accelerator

BATCH = 2
# (image id, aspect bucket): 9 images in one bucket
IMAGES = [(f"img{i:02d}", "768x512") for i in range(9)]


def main():
    accelerator = Accelerator(cpu=True)
    with accelerator.split_between_processes(IMAGES, apply_padding=True) as mine:
        local_images = list(mine)
    max_train_steps = math.ceil(len(local_images) / BATCH)

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = accelerator.prepare(model, opt)

    losses = []
    for step in range(max_train_steps):
        batch = local_images[step * BATCH:(step + 1) * BATCH]
        x = torch.stack([torch.full((8,), float(int(name[3:]))) / 10 for name, _ in batch])
        loss = model(x).pow(2).mean()
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        losses.append(accelerator.gather(loss.detach()).mean().item())
    accelerator.print(f"{max_train_steps} steps, last mean loss {losses[-1]:.4f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

# verify: hang
"""The main process draws a preview batch from the prepared, shuffled train dataloader.

Modelled on https://github.com/rwth-i6/returnn/pull/1627 (review: "You are potentially creating
the data loader [iterator] twice for the main rank, but only once for the other ranks", a
synchronisation bug) and https://github.com/huggingface/accelerate/pull/2694 (a prepared
dataloader synchronises its sampler's generator across processes each time it is iterated).

Before training, the main process logs the first batch to the run card, as scripts log sample
images or token ids to their tracker. `next(iter(train_loader))` on the prepared loader starts a
new epoch of it: accelerate's `DataLoaderShard.__iter__` broadcasts the shuffling generator's
state from process 0. Process 1 draws no preview, so the broadcast pairs with its first real epoch,
and from there on the two processes' collectives are one step apart.
"""
import json

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def make_dataset():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(24, 6, generator=g)
    return TensorDataset(x, (x[:, :3].sum(dim=1) > 0).long())


def write_run_card(batch):
    x, y = batch
    card = {"input_shape": list(x.shape), "labels": y.tolist(), "first_row": [round(v, 3) for v in x[0].tolist()]}
    print("run card:", json.dumps(card))


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    model = torch.nn.Linear(6, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoader(make_dataset(), batch_size=4, shuffle=True)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)

    if accelerator.is_main_process:
        write_run_card(next(iter(train_loader)))  # expect: BCL011

    for epoch in range(2):
        correct = torch.zeros(1)
        for x, y in train_loader:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            correct += (logits.argmax(dim=1) == y).sum()
        correct = accelerator.reduce(correct)
        accelerator.print(f"epoch {epoch}: {int(correct.item())} of 24 right")
    accelerator.end_training()


if __name__ == "__main__":
    main()

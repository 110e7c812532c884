# verify: ok
"""Hand-fixed twin of main_only_preview_prepared_loader.py.

The main process previews the first rows of the dataset itself (`dataset[:4]`), which involves no
other process; the prepared dataloader is iterated only by the training loop, on every process.
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
    dataset = make_dataset()
    train_loader = DataLoader(dataset, batch_size=4, shuffle=True)
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)

    if accelerator.is_main_process:
        write_run_card(dataset[:4])

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

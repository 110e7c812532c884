# verify: hang
"""Count optimizer steps with a progress bar that is disabled off the main process.

Modelled on https://github.com/huggingface/transformers/issues/31532: "I set the progress_bar
enabled only on the main process [...] So this caused only the main process enter into the
evaluate part, so the `gather_for_metrics` is waiting for the other process forever". A disabled
tqdm bar does not count, so `progress_bar.n` stays 0 on the other processes.
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

EVAL_EVERY = 2


def evaluate(accelerator, model, loader):
    model.eval()
    correct = []
    with torch.no_grad():
        for x, y in loader:
            preds = model(x).argmax(-1)
            correct.append(accelerator.gather_for_metrics(preds == y))
    model.train()
    return torch.cat(correct).float().mean().item()


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    train = TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))
    val = TensorDataset(torch.randn(8, 4), torch.randint(0, 3, (8,)))
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, train_dl, val_dl = accelerator.prepare(
        model, opt, DataLoader(train, batch_size=2), DataLoader(val, batch_size=2)
    )
    progress_bar = tqdm(range(len(train_dl)), disable=not accelerator.is_main_process)
    for x, y in train_dl:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        progress_bar.update(1)
        completed_steps = progress_bar.n
        if completed_steps % EVAL_EVERY == 0 and completed_steps > 0:
            acc = evaluate(accelerator, model, val_dl)  # expect: BCL005
            progress_bar.set_postfix(acc=acc)
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()

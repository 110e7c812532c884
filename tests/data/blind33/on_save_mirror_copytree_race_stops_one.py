# verify: hang,error
"""A transformers `TrainerCallback` that mirrors every checkpoint to a second location and stops
training when the mirror fails, so checkpoints that exist only once do not pile up.

Modelled on https://github.com/huggingface/transformers/issues/36076: several DDP processes copy
or move the same checkpoint directory at once, and the copy raises `OSError` on one of them.

`on_save` runs on every process. Each calls `shutil.copytree(src, dst)` into the same mirror
directory; `copytree` creates `dst` without `exist_ok`, so exactly one process wins and the other
gets `FileExistsError`. That process alone sets `control.should_training_stop` and leaves the
training loop, while the other goes on into the next step's DDP gradient all-reduce.
"""
import os
import shutil
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments

ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-run",
)


class Pairs(Dataset):
    def __init__(self, n):
        gen = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 4, generator=gen)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.x[i].sum().unsqueeze(0)}


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        out = self.net(x)
        return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}


class MirrorCheckpoints(TrainerCallback):
    def __init__(self, mirror):
        self.mirror = mirror

    def on_save(self, args, state, control, **kwargs):
        name = f"checkpoint-{state.global_step}"
        try:
            shutil.copytree(os.path.join(args.output_dir, name), os.path.join(self.mirror, name))
        except OSError as err:
            print(f"mirroring {name} failed ({err}); stopping")
            control.should_training_stop = True  # expect: BCL011
        return control


def main():
    torch.manual_seed(0)
    args = TrainingArguments(
        output_dir=os.path.join(ROOT, "out"), per_device_train_batch_size=4, max_steps=8,
        save_strategy="steps", save_steps=2, logging_strategy="no", report_to="none",
        use_cpu=True, disable_tqdm=True,
    )
    trainer = Trainer(
        model=Regressor(), args=args, train_dataset=Pairs(64),
        callbacks=[MirrorCheckpoints(os.path.join(ROOT, "mirror"))],
    )
    trainer.train()
    trainer.accelerator.wait_for_everyone()
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()

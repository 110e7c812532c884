# verify: ok
"""After training, only process zero exports the model with `Trainer.save_model`.

Resembles trigger_file_rename_claims_should_save: a transformers `Trainer` method that writes a
checkpoint is called by one process only. But `save_model` under plain DDP (no DeepSpeed, no FSDP)
writes the weights on the process that calls it and runs no collective (unlike `_save_checkpoint`,
which opens with `store_flos()`'s all-gather), and training is over, so the other process has no
collective left to wait in before the final barrier that both reach.
"""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind29-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-export",
)


class Rows(Dataset):
    def __init__(self, n=24):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 6, generator=g)
        self.y = torch.randn(n, 1, generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.y[i]}


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 1)

    def forward(self, x, labels=None):
        out = self.lin(x)
        return {"loss": F.mse_loss(out, labels), "logits": out}


def main():
    args = TrainingArguments(
        output_dir=RUN_DIR,
        per_device_train_batch_size=2,
        max_steps=4,
        learning_rate=0.05,
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        ddp_timeout=20,
    )
    trainer = Trainer(model=Regressor(), args=args, train_dataset=Rows())
    trainer.train()
    if trainer.is_world_process_zero():
        trainer.save_model(os.path.join(RUN_DIR, "final"))
        print("exported", sorted(os.listdir(os.path.join(RUN_DIR, "final"))))
    trainer.accelerator.wait_for_everyone()
    if trainer.is_world_process_zero():
        shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

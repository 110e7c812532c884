# verify: error,hang
"""A TrainerCallback saves on demand when an operator drops a trigger file; one process claims it.

Modelled on https://github.com/axolotl-ai-cloud/axolotl/pull/3233 (an on-demand checkpoint callback
driven by a trigger file; every process must agree on the save, so one process reads the file and
the decision is shared). Here each process looks for the file itself and claims it with an atomic
`os.rename`, so the trigger is handled once: exactly one process wins the rename and sets
`control.should_save`. Its `Trainer._save_checkpoint` opens with `store_flos()`, an all-gather,
while the other process has gone on to the next step's DDP gradient all-reduce.
"""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind29-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-run",
)
TRIGGER = os.path.join(RUN_DIR, "SAVE_NOW")


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


class SaveOnTrigger(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 2:
            open(TRIGGER, "a").close()  # stands in for the operator's `touch SAVE_NOW`
        if state.global_step == 3 and os.path.exists(TRIGGER):
            try:
                os.rename(TRIGGER, TRIGGER + ".handled")
            except FileNotFoundError:
                return control  # already claimed
            control.should_save = True  # expect: BCL011
        return control


def main():
    os.makedirs(RUN_DIR, exist_ok=True)
    args = TrainingArguments(
        output_dir=RUN_DIR,
        per_device_train_batch_size=2,
        max_steps=6,
        learning_rate=0.05,
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        ddp_timeout=20,
    )
    trainer = Trainer(model=Regressor(), args=args, train_dataset=Rows(), callbacks=[SaveOnTrigger()])
    trainer.train()
    print(f"rank {args.process_index}: total_flos {trainer.state.total_flos}")
    trainer.accelerator.wait_for_everyone()
    if trainer.is_world_process_zero():
        shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

# verify: ok
"""Look-alike: a progress callback that returns early off the main process, but only prints.

Like `world_zero_progress_callback_forces_log`, `ConsoleProgress.on_step_end` returns at once
where `state.is_world_process_zero` is false, but on process 0 it only reads
`state.log_history` and prints; it sets no `control` flag, so the Trainer's own logging and
saving decisions stay the same on every process.
"""
import os
import tempfile

import torch
from torch import nn
from transformers import Trainer, TrainerCallback, TrainingArguments

PRINT_EVERY = 2


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x, labels=None):
        pred = self.lin(x).squeeze(-1)
        return {"loss": nn.functional.mse_loss(pred, labels), "logits": pred}


class ConsoleProgress(TrainerCallback):
    def __init__(self, every):
        self.every = every

    def on_step_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        if state.global_step % self.every == 0:
            last = state.log_history[-1] if state.log_history else {}
            print(f"step {state.global_step}/{state.max_steps} last log {last}")


def rows():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(24, 4, generator=g)
    return [{"x": xi, "labels": xi.sum()} for xi in x]


def main():
    out = os.path.join(tempfile.gettempdir(), f"blind16-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}")
    args = TrainingArguments(
        output_dir=out,
        use_cpu=True,
        per_device_train_batch_size=2,
        max_steps=6,
        logging_steps=100,
        save_strategy="no",
        report_to=[],
        remove_unused_columns=False,
        disable_tqdm=True,
    )
    trainer = Trainer(model=Regressor(), args=args, train_dataset=rows(), callbacks=[ConsoleProgress(PRINT_EVERY)])
    trainer.train()


if __name__ == "__main__":
    main()

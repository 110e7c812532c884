# verify: ok
"""A progress callback that returns early off the main process and forces a log line.

Modelled on huggingface/transformers#42029 ("Need to understand logging_steps in Trainer": in
DDP the Trainer gathers the training loss across processes at every logging step): a
`TrainerCallback` that prints progress only where `state.is_world_process_zero` also sets
`control.should_log = True` there, so only process 0 runs the Trainer's logging branch
(`nested_gather` of the loss, then `store_flos`); process 1 goes on to the next step.

Hand fix: the flag is set on every process (the step test is the same everywhere); only the
print stays behind `state.is_world_process_zero`.
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
        if state.global_step % self.every == 0:
            control.should_log = True
            if state.is_world_process_zero:
                print(f"step {state.global_step}/{state.max_steps}")


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

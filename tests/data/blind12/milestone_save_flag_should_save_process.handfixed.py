# verify: ok
"""Hand-fixed: the TrainerCallback requests the milestone checkpoint on every process; the Trainer
itself keeps the writing to process 0 (`args.should_save`).

Modelled on https://github.com/huggingface/transformers/pull/7365 (the Trainer hung while saving in
distributed training: `store_flos`, a collective, ran on the main process only) and
https://github.com/Red-Hat-AI-Innovation-Team/training_hub/pull/145 (save flags that differ
across processes' `on_step_end`). `args.should_save` is the Trainer's "this process writes the
files" flag, true on process 0 only; the callback uses it to decide whether to set
`control.should_save`, so only process 0 enters `_save_checkpoint`, whose `store_flos` gathers the
floating-point operation counts of every process.
"""
import os
import tempfile

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

OUT_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind12-milestone-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
)
MILESTONES = {2}


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        pred = self.net(x).squeeze(-1)
        return {"loss": torch.nn.functional.mse_loss(pred, labels), "logits": pred}


class MilestoneSave(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step in MILESTONES:  # every process: the Trainer writes on process 0 only
            control.should_save = True
        return control


def rows(n=16):
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(0))
    return [{"x": x[i], "labels": x[i].sum()} for i in range(n)]


def main():
    args = TrainingArguments(
        output_dir=OUT_DIR, per_device_train_batch_size=2, max_steps=4, learning_rate=0.05,
        save_strategy="no", logging_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True,
    )
    trainer = Trainer(model=Regressor(), args=args, train_dataset=rows(), callbacks=[MilestoneSave()])
    trainer.train()


if __name__ == "__main__":
    main()

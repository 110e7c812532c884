# verify: ok
"""Hand-fixed twin of spike_guard_callback_stops_one_process: the stop decision is agreed.

Each process's loss is all-reduced (MAX) in ``on_step_end``, which the Trainer calls on every
process at every step; the guard stops when the largest loss of the step passes the limit, so
all processes set ``should_training_stop`` at the same step (the remedy of
Lightning-AI/pytorch-lightning#379, https://github.com/Lightning-AI/pytorch-lightning/issues/379:
reduce the stop decision across processes).
"""
import os
import tempfile

import torch
import torch.distributed as dist
from transformers import Trainer, TrainerCallback, TrainingArguments


class TinyRegressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.net(x)


class GuardedTrainer(Trainer):
    last_local_loss = 0.0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        pred = model(inputs["x"])
        loss = torch.nn.functional.mse_loss(pred, inputs["y"])
        self.last_local_loss = loss.detach().item()
        return (loss, pred) if return_outputs else loss


class SpikeGuard(TrainerCallback):
    def __init__(self, limit):
        self.limit = limit
        self.trainer = None

    def on_step_end(self, args, state, control, **kwargs):
        worst = torch.tensor([self.trainer.last_local_loss])
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        if worst.item() > self.limit:
            print(f"loss spike at step {state.global_step}: stopping")
            control.should_training_stop = True
        return control


def make_rows():
    gen = torch.Generator().manual_seed(3)
    rows = []
    for i in range(16):
        x = torch.randn(4, generator=gen)
        y = x.sum().reshape(1)
        if i in (6, 7):  # batch 3: corrupt targets
            y = y + 1000.0
        rows.append({"x": x, "y": y})
    return rows


def main():
    out = os.path.join(tempfile.gettempdir(), f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-hf")
    args = TrainingArguments(
        output_dir=out, use_cpu=True, per_device_train_batch_size=2, num_train_epochs=1,
        learning_rate=0.01, save_strategy="no", report_to=[], logging_steps=100,
        remove_unused_columns=False, train_sampling_strategy="sequential", disable_tqdm=True,
    )
    guard = SpikeGuard(limit=1000.0)
    trainer = GuardedTrainer(model=TinyRegressor(), args=args, train_dataset=make_rows(), callbacks=[guard])
    guard.trainer = trainer
    trainer.train()
    steps = torch.tensor([float(trainer.state.global_step)])
    dist.all_reduce(steps)
    if dist.get_rank() == 0:
        print(f"steps summed over processes: {steps.item()}")


if __name__ == "__main__":
    main()

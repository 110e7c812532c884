# verify: hang
"""A loss-spike guard callback stops training on the one process whose own batch spiked.

Modelled on Lightning-AI/pytorch-lightning#379
(https://github.com/Lightning-AI/pytorch-lightning/issues/379: "if the stop condition is met in
one or more subprocess but not in all subprocess, the corresponding subprocess are stop but the
others ones are still running and the training hangs") and NVIDIA-NeMo/Speech#578
(https://github.com/NVIDIA-NeMo/Speech/pull/578: a bad loss on some ranks must not end training
on those ranks alone). ``GuardedTrainer.compute_loss`` keeps the process's own loss;
``SpikeGuard.on_step_end`` sets ``control.should_training_stop`` when that loss passes the limit.
With ``train_sampling_strategy="sequential"`` process 1 gets batches 1, 3, 5, ...; batch 3 holds
two rows with corrupt targets, so process 1 stops after its second step while process 0 goes on
into its third forward and backward (DDP's gradient all-reduce).
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
        if self.trainer.last_local_loss > self.limit:
            print(f"loss spike at step {state.global_step}: stopping")
            control.should_training_stop = True  # expect: BCL011
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

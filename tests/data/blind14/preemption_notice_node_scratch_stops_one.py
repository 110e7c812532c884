# verify: hang
"""A TrainerCallback that stops training when the node's scratch holds a preemption notice.

Modelled on https://github.com/talmolab/sleap-nn/pull/471 (a stop command reached only the rank
that listens for it; that rank set the trainer's stop flag, left the training loop, and the other
ranks deadlocked; the fix agrees on the flag across ranks).

Each process here stands for one node and has its own scratch directory (named after the job's
`MASTER_ADDR` and `MASTER_PORT` and the node); the cluster agent of node 0 has dropped `PREEMPT`
into node 0's scratch before the run. `PreemptionNotice.on_step_end` looks only in its own
node's scratch, so process 0 sets `control.should_training_stop` after its first step and leaves
`trainer.train()`, while process 1 goes on to its second step's DDP backward.
"""
import os
import tempfile
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments

JOB_DIR = Path(tempfile.gettempdir()) / f"blind14-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
NODE = int(os.environ["RANK"])  # one process per (simulated) node
SCRATCH = JOB_DIR / f"node{NODE}-scratch"


class Pairs(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        x = torch.tensor([0.1 * i, 1.0 - 0.05 * i])
        return {"x": x, "labels": x.sum(dim=0, keepdim=True)}


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(2, 1)

    def forward(self, x, labels=None):
        pred = self.net(x)
        return {"loss": (pred - labels).pow(2).mean(), "logits": pred}


class PreemptionNotice(TrainerCallback):
    def __init__(self, scratch):
        self.notice = scratch / "PREEMPT"

    def on_step_end(self, args, state, control, **kwargs):
        if self.notice.exists():
            print(f"node {NODE}: preemption notice at step {state.global_step}, stopping")
            control.should_training_stop = True  # expect: BCL011


def cluster_agent_drops_notice():
    """Stands for node 0's scheduler agent: the notice is there before training starts."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    if NODE == 0:
        (SCRATCH / "PREEMPT").touch()


def main():
    cluster_agent_drops_notice()
    torch.manual_seed(0)
    args = TrainingArguments(
        output_dir=str(JOB_DIR / "out"), per_device_train_batch_size=2, max_steps=4,
        learning_rate=0.05, use_cpu=True, report_to="none", save_strategy="no",
        logging_strategy="no", disable_tqdm=True, ddp_backend="gloo",
    )
    trainer = Trainer(model=Regressor(), args=args, train_dataset=Pairs(),
                      callbacks=[PreemptionNotice(SCRATCH)])
    trainer.train()
    print(f"node {NODE}: stopped at step {trainer.state.global_step}")


if __name__ == "__main__":
    main()

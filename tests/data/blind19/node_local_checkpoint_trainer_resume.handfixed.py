# verify: ok nproc=1 nnodes=2
"""Hand fix: `save_on_each_node=True`, so each node's local main process writes a full checkpoint
to its own disk (the setting transformers' own warnings point multi-node runs without shared
storage to).

Resuming a two-node Trainer job from node-local output directories.

Modelled on axolotl-ai-cloud/axolotl#884 (https://github.com/axolotl-ai-cloud/axolotl/issues/884)
and hiyouga/LlamaFactory#655 (https://github.com/hiyouga/LlamaFactory/issues/655): two nodes
without shared storage, `save_on_each_node` left at False, so only the global main process writes
the model, optimizer and trainer state of each checkpoint; the other node's `checkpoint-N`
directory holds only its RNG state. On restart every node resumes from
`get_last_checkpoint(output_dir)` on its own disk: node 0 finds a full checkpoint, node 1 an
incomplete one. Each node's disk is simulated by a directory named after its node rank.
"""
import os
import shutil
import tempfile
from dataclasses import dataclass

import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint


@dataclass
class JobConfig:
    first_run_steps: int = 4
    total_steps: int = 8
    save_steps: int = 4
    batch_size: int = 4


class PairsDataset(Dataset):
    def __init__(self, rows: int = 64, seed: int = 3):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(rows, 6, generator=g)
        self.y = self.x @ torch.linspace(-1.0, 1.0, 6)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict:
        return {"inputs": self.x[i], "labels": self.y[i]}


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(6, 1)

    def forward(self, inputs, labels=None):
        pred = self.head(inputs).squeeze(-1)
        loss = torch.nn.functional.mse_loss(pred, labels) if labels is not None else None
        return {"loss": loss, "logits": pred}


def node_output_dir() -> str:
    job = f"blind19-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return os.path.join(tempfile.gettempdir(), job, f"node{os.environ['GROUP_RANK']}", "run")


def make_trainer(cfg: JobConfig, max_steps: int) -> Trainer:
    args = TrainingArguments(
        output_dir=node_output_dir(),
        max_steps=max_steps,
        save_steps=cfg.save_steps,
        per_device_train_batch_size=cfg.batch_size,
        learning_rate=0.05,
        logging_steps=2,
        report_to=[],
        use_cpu=True,
        ddp_backend="gloo",
        save_on_each_node=True,
        disable_tqdm=True,
    )
    torch.manual_seed(0)
    return Trainer(model=Regressor(), args=args, train_dataset=PairsDataset())


def main() -> None:
    cfg = JobConfig()
    shutil.rmtree(node_output_dir(), ignore_errors=True)
    make_trainer(cfg, cfg.first_run_steps).train()  # the job that was preempted
    last = get_last_checkpoint(node_output_dir())
    trainer = make_trainer(cfg, cfg.total_steps)
    trainer.train(resume_from_checkpoint=last)
    print(f"node {os.environ['GROUP_RANK']}: finished at step {trainer.state.global_step}", flush=True)


if __name__ == "__main__":
    main()

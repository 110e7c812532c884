# verify: ok
"""Modelled on https://github.com/ByteDance-Seed/VeOmni/pull/1179: on resume each rank reads its
own trainer-state file and falls back to step 0 when it is missing; only the main process ever
wrote one, so the ranks resume at different steps and run different numbers of reducing steps.
"""
import json
import os
import tempfile
from dataclasses import dataclass

import torch
from accelerate import Accelerator


@dataclass
class TrainConfig:
    output_dir: str
    total_steps: int = 6
    save_at: int = 3


class TrainerState:
    def __init__(self, cfg, accelerator):
        self.accelerator = accelerator
        self.path = os.path.join(cfg.output_dir, "trainer_state.json")

    def save(self, step):
        if self.accelerator.is_main_process:
            with open(self.path, "w") as f:
                json.dump({"global_step": step}, f)

    def load(self):
        if not os.path.exists(self.path):
            return 0
        with open(self.path) as f:
            return json.load(f)["global_step"]


def run(cfg, accelerator, stop_at=None):
    state = TrainerState(cfg, accelerator)
    start = state.load()
    for step in range(start, cfg.total_steps):
        loss = torch.tensor([float(step)])
        mean_loss = accelerator.reduce(loss, reduction="mean")
        if step + 1 == cfg.save_at:
            state.save(step + 1)
        if stop_at is not None and step + 1 == stop_at:
            return mean_loss
    return mean_loss


def main():
    accelerator = Accelerator()
    job = f"blind3-resume-{os.getppid()}-{os.environ.get('MASTER_PORT', '0')}"
    cfg = TrainConfig(output_dir=os.path.join(tempfile.gettempdir(), job))
    os.makedirs(cfg.output_dir, exist_ok=True)
    run(cfg, accelerator, stop_at=cfg.save_at)  # first run, "preempted" after its save
    accelerator.wait_for_everyone()
    print(run(cfg, accelerator))  # resumed run


if __name__ == "__main__":
    main()

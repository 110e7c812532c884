# verify: ok
"""Hand fix of sweep_agent_claims_next_run_fabric: one agent per run, not per process: process 0
claims the run and `fabric.broadcast` hands its index and configuration to every process.
"""
import os
import shutil
import tempfile

import torch
from lightning.fabric import Fabric

GRID = [{"lr": 0.1, "epochs": 2}, {"lr": 0.05, "epochs": 3}, {"lr": 0.02, "epochs": 4}]
SWEEP_DIR = os.path.join(tempfile.gettempdir(), f"blind48-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-sweep")


class SweepAgent:
    def __init__(self, sweep_dir, grid):
        self.sweep_dir, self.grid = sweep_dir, grid
        os.makedirs(sweep_dir, exist_ok=True)

    def next_run(self):
        for index, config in enumerate(self.grid):
            try:
                fd = os.open(os.path.join(self.sweep_dir, f"run-{index}.claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            os.close(fd)
            return index, config
        return None, None


def train(fabric, config):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=config["lr"])
    model, opt = fabric.setup(model, opt)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    for _ in range(config["epochs"]):
        for i in range(0, 8, 4):
            loss = torch.nn.functional.mse_loss(model(x[i:i + 4]), y[i:i + 4])
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
    return loss.item()


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    agent = SweepAgent(SWEEP_DIR, GRID)
    run = agent.next_run() if fabric.is_global_zero else None
    index, config = fabric.broadcast(run, src=0)
    print("run", index, config, train(fabric, config))
    fabric.barrier()
    shutil.rmtree(SWEEP_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

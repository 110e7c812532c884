"""Experiment tracking helpers shared by the tracking programs of this corpus."""
import json
import logging
import os


def quiet_secondary_processes(accelerator):
    """One tracked run per job: the other processes switch the tracker and their logging off."""
    if not accelerator.is_main_process:
        os.environ["WANDB_MODE"] = "disabled"
        logging.getLogger().setLevel(logging.ERROR)


def tracking_enabled():
    return os.environ.get("WANDB_MODE", "online") != "disabled"


class RunTracker:
    def __init__(self, accelerator, run_dir):
        self.accelerator = accelerator
        self.run_dir = run_dir
        self.lines = []

    def start(self, config, enabled=True):
        if enabled and self.accelerator.is_main_process:
            os.makedirs(self.run_dir, exist_ok=True)
            with open(os.path.join(self.run_dir, "config.json"), "w") as f:
                json.dump(config, f)
        # a slow start on the main process must not leave the others in the first collective alone
        self.accelerator.wait_for_everyone()

    def log(self, step, values):
        self.lines.append(json.dumps({"step": step, **values}))

    def finish(self):
        if self.lines and self.accelerator.is_main_process:
            with open(os.path.join(self.run_dir, "metrics.jsonl"), "w") as f:
                f.write("\n".join(self.lines) + "\n")

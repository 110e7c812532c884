"""Checkpoint writing for the accelerate training loops of this corpus."""
import os


def save_checkpoint(accelerator, model, out_dir, step):
    # make sure every process has finished the step before the weights are read
    accelerator.wait_for_everyone()
    path = os.path.join(out_dir, f"checkpoint-{step}")
    os.makedirs(path, exist_ok=True)
    accelerator.save(accelerator.unwrap_model(model).state_dict(), os.path.join(path, "model.pt"))
    return path

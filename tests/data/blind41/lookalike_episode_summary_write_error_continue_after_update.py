# verify: ok
"""An episode summary whose write fails on one process, caught with `continue` after the update.

Look-alike of an exception that skips an update: the second process's summary path is taken by a
directory left from an earlier run, so `open(..., "w")` raises `IsADirectoryError` there and the
`except OSError: continue` skips the rest of that iteration; but the write comes after
`accelerator.backward` and `optimizer.step`, so both processes make every update.
"""
import os
import shutil
import tempfile

import torch
from accelerate import Accelerator

EPISODES = 3


def main():
    os.environ.setdefault("ACCELERATE_USE_CPU", "true")
    accelerator = Accelerator()
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    run_dir = os.path.join(tempfile.gettempdir(), f"blind41-{addr}-{port}-summaries")
    os.makedirs(run_dir, exist_ok=True)
    summary_path = os.path.join(run_dir, f"summary-{accelerator.process_index}.txt")
    if accelerator.process_index % 2 == 1:
        os.makedirs(summary_path, exist_ok=True)  # stale directory under the file's name
    torch.manual_seed(0)
    critic = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    critic, opt = accelerator.prepare(critic, opt)
    written = 0
    for episode in range(EPISODES):
        obs, returns = torch.randn(16, 4), torch.rand(16)
        loss = torch.nn.functional.mse_loss(critic(obs).squeeze(1), returns)
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        try:
            with open(summary_path, "w") as f:
                f.write(f"episode {episode} loss {loss.item():.4f}\n")
        except OSError as err:
            print(f"process {accelerator.process_index}: no summary ({err.strerror})")
            continue
        written += 1
    print(f"process {accelerator.process_index}: {written} summaries")
    accelerator.wait_for_everyone()
    shutil.rmtree(run_dir, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand-fixed: a missing RNG state file skips only the RNG restore; every process calls
`fabric.load` and resumes from the same step.

Modelled on https://github.com/redai-studio/Relax/pull/317 (`_load_rng` skips silently when this
rank's `rng_rank{rank}.pt` is absent: an older checkpoint, or a resume with a different world
size) and https://github.com/TensorAuto/OpenTau/pull/180 (resuming on more GPUs than the
checkpoint was saved with: the new ranks find no RNG file). The checkpoint was written by a
one-process run, so only `rng_rank0.pt` exists. Process 1 returns step 0 before `fabric.load`,
whose barrier process 0 then waits in, and would train 6 steps against process 0's 3.
"""
import os
import tempfile
from pathlib import Path

import torch
from lightning.fabric import Fabric

CKPT_DIR = Path(tempfile.gettempdir()) / (
    f"blind12-resume-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
)
TOTAL_STEPS = 6


def write_single_process_checkpoint():
    """What the earlier one-process run left: its state at step 3 and rank 0's RNG state."""
    CKPT_DIR.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 3}, CKPT_DIR / "state.ckpt")
    torch.save(torch.get_rng_state(), CKPT_DIR / "rng_rank0.pt")


def resume(fabric, state):
    rng_path = CKPT_DIR / f"rng_rank{fabric.global_rank}.pt"
    if rng_path.exists():
        torch.set_rng_state(torch.load(rng_path))
    else:  # only the random stream is missing: the shared state is still loaded
        print(f"process {fabric.global_rank}: no RNG state in the checkpoint, keeping the seed's stream")
    fabric.load(CKPT_DIR / "state.ckpt", state)
    return state["step"]


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    if fabric.is_global_zero:
        write_single_process_checkpoint()
    fabric.barrier()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = fabric.setup(model, optimizer)
    state = {"model": model, "optimizer": optimizer, "step": 0}
    start = resume(fabric, state)
    for step in range(start, TOTAL_STEPS):
        x = torch.randn(4, 4)
        loss = torch.nn.functional.mse_loss(model(x).squeeze(-1), x.sum(dim=1))
        optimizer.zero_grad()
        fabric.backward(loss)
        optimizer.step()
    fabric.print(f"trained steps {start}..{TOTAL_STEPS - 1}")


if __name__ == "__main__":
    main()

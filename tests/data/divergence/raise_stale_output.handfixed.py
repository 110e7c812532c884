"""The processes agree on the pre-flight check (all-reduce the stale flag) and all stop cleanly, or
all go on, together."""
import os
import tempfile

import torch
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    rank = accelerator.process_index
    out_dir = os.path.join(tempfile.gettempdir(), f"eval-{os.environ['MASTER_PORT']}")
    os.makedirs(out_dir, exist_ok=True)
    out_path = os.path.join(out_dir, f"results.rank{rank}.pt")
    if rank == 1:  # left behind by an interrupted earlier run
        torch.save({}, out_path)
    accelerator.wait_for_everyone()
    stale = accelerator.reduce(torch.tensor([int(os.path.exists(out_path))]), reduction="sum")
    if stale.item():
        accelerator.print(f"{stale.item()} stale results file(s) in {out_dir}; resume or merge explicitly")
        accelerator.end_training()
        return
    scores = torch.tensor([0.5 + rank])
    torch.save(scores, out_path)
    accelerator.wait_for_everyone()
    total = accelerator.reduce(scores, reduction="sum")
    accelerator.print(f"total score {total.item():.2f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

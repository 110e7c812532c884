# verify: error
"""A pre-flight check before a sharded evaluation with Accelerate: each process refuses to overwrite
its own results file and raises if one is left from an earlier run. Only rank 1's file is stale,
so rank 1 raises and rank 0 goes on to `wait_for_everyone()` alone.

Modelled on the review of ai-dynamo/aiconfigurator#1542
(https://github.com/ai-dynamo/aiconfigurator/pull/1542): "Rank-asymmetric pre-flight raises can
hang peer ranks": a stale per-rank file made one rank raise while the others blocked in the next
collective.
"""
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
    if os.path.exists(out_path):
        raise FileExistsError(f"stale results at {out_path}; resume or merge explicitly")
    scores = torch.tensor([0.5 + rank])
    torch.save(scores, out_path)
    accelerator.wait_for_everyone()  # expect: BCL005
    total = accelerator.reduce(scores, reduction="sum")
    accelerator.print(f"total score {total.item():.2f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

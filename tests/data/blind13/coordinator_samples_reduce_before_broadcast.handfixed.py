# verify: ok
"""Hand-fixed: every process receives the token first and all-reduces the "finished" flag after it,
in the same order as the sampling process; only the sampling itself stays on the main process.
"""
import os

os.environ.setdefault("ACCELERATE_USE_CPU", "true")

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast

SAMPLE_ON_MAIN_ONLY = True
EOS = 0
MAX_NEW = 5


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    head = torch.nn.Linear(4, 6)
    state = torch.ones(4)
    tokens = []
    for _ in range(MAX_NEW):
        logits = head(state)
        token = torch.zeros(1, dtype=torch.long)
        finished = torch.zeros(1)
        if accelerator.is_main_process or not SAMPLE_ON_MAIN_ONLY:
            token = logits.argmax().reshape(1)
        token = broadcast(token)
        finished = accelerator.reduce(finished + float(token.item() == EOS), reduction="sum")
        tokens.append(int(token.item()))
        if finished.item() > 0:
            break
        state = state.roll(1) + 0.1 * token.float()
    accelerator.print(f"decoded {tokens}")
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()

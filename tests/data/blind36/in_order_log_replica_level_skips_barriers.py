# verify: hang,error
"""Per-process shard losses logged one process at a time with Accelerate's `in_order=True`.

Modelled on https://github.com/huggingface/accelerate/issues/3939 ("in_order parameter in logging is
broken - deadlock or ignored"): `MultiProcessAdapter.log(..., in_order=True)` makes the processes take
turns, with a `wait_for_everyone()` after each turn, but all of it sits under
`if self.isEnabledFor(level):`. The script sets each process's level from transformers'
`TrainingArguments.get_process_log_level()`, which gives the main process `log_level="info"` and
every replica `log_level_replica="warning"`. On the main process the INFO record goes through its
two barriers; on the other the record is dropped before any barrier, and that process goes on to the
next epoch's backward (DDP's gradient all-reduce).
"""
import logging
import os
import shutil
import tempfile

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from transformers import TrainingArguments

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind36-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-inorder",
)

logger = get_logger(__name__)


def main():
    args = TrainingArguments(output_dir=RUN_DIR, log_level="info", use_cpu=True, report_to=[])
    logging.basicConfig(format="%(levelname)s %(message)s")
    logger.setLevel(args.get_process_log_level())
    accelerator = Accelerator(cpu=True)

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = accelerator.prepare(model, optimizer)
    gen = torch.Generator().manual_seed(20 + accelerator.process_index)
    x = torch.randn(16, 4, generator=gen)
    y = x.sum(dim=1, keepdim=True)

    for epoch in range(3):
        total = 0.0
        for i in range(0, 16, 4):
            loss = torch.nn.functional.mse_loss(model(x[i:i + 4]), y[i:i + 4])
            optimizer.zero_grad()
            accelerator.backward(loss)
            optimizer.step()
            total += loss.item()
        logger.info(  # expect: BCL011
            f"epoch {epoch} process {accelerator.process_index}: shard loss {total / 4:.4f}",
            main_process_only=False,
            in_order=True,
        )

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

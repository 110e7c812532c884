# verify: hang
"""A results publisher that skips its closing barrier after its own write failed.

Modelled on ai-dynamo/aiconfigurator#1542 (https://github.com/ai-dynamo/aiconfigurator/pull/1542),
where a review found that "a rank-0 write failure leaves the other ranks blocked in
`dist.barrier`" (`finally: if not run_failed: dist.barrier(...)`), and on
flashinfer-ai/flashinfer#4393 (https://github.com/flashinfer-ai/flashinfer/pull/4393): a
`json.dump` that raises only on rank 0.

Only the main process writes the JSON; its rows hold the loss as a tensor (no `.item()`), so
`json.dump` raises TypeError there alone. The handler sets `self.failed`, and the `finally`
block skips `wait_for_everyone()` on that process: process 0 goes on to the next round's
`accelerator.reduce` while process 1 waits in the barrier.
"""
import json
import logging
import os
import tempfile

import torch
from accelerate import Accelerator

log = logging.getLogger("publish")


class ResultsPublisher:
    def __init__(self, accelerator: Accelerator, out_dir: str):
        self.accelerator = accelerator
        self.out_dir = out_dir
        self.failed = False

    def publish(self, round_no: int, rows: list[dict]) -> None:
        try:
            if self.accelerator.is_main_process:
                with open(os.path.join(self.out_dir, f"round{round_no}.json"), "w") as f:
                    json.dump(rows, f)
        except (OSError, TypeError) as err:
            log.error("could not publish round %d: %s", round_no, err)
            self.failed = True
        finally:
            if not self.failed:  # expect: BCL005
                self.accelerator.wait_for_everyone()


def main() -> None:
    accelerator = Accelerator()
    run = f"publish-{os.getppid()}-{os.environ.get('MASTER_PORT', '0')}"
    out_dir = os.path.join(tempfile.gettempdir(), run)
    os.makedirs(out_dir, exist_ok=True)
    publisher = ResultsPublisher(accelerator, out_dir)
    g = torch.Generator().manual_seed(accelerator.process_index)
    for round_no in range(2):
        loss = accelerator.reduce(torch.rand(1, generator=g), reduction="mean")
        publisher.publish(round_no, [{"round": round_no, "loss": loss}])
    accelerator.end_training()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand-fixed twin of publish_failure_skips_barrier.py: the barrier runs whatever the write did.

Modelled on ai-dynamo/aiconfigurator#1542 (https://github.com/ai-dynamo/aiconfigurator/pull/1542),
whose review asked that every rank still reach the barrier after a rank-0 failure: the failure
is logged and remembered, and the `finally` block calls `wait_for_everyone()` on every process.
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

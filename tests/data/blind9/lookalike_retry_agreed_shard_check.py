# verify: ok
"""Look-alike: a retried ``connect()`` holding collectives, retried by every process together.

``connect()`` still carries ``@retry`` and still holds collectives, but it raises only after the
processes have agreed: each counts whether its own shard is there and the counts are summed
(``accelerator.reduce``); unless every shard has landed, every process raises
``FileNotFoundError`` and every process retries, so each attempt runs the same collectives
everywhere.
"""
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import torch
from accelerate import Accelerator

from mod_retry import retry

SHARDS = {"shard-0.txt": 6, "shard-1.txt": 60}  # records per shard; copy time follows the size


def prefetch(root, name, records):
    time.sleep(records / 100)
    tmp = root / f".{name}.part"
    tmp.write_text(" ".join(str(i) for i in range(records)))
    tmp.rename(root / name)


class ShardStore:
    def __init__(self, accelerator, root):
        self.accelerator = accelerator
        self.root = root

    @retry(times=6, delay=0.4, exceptions=(FileNotFoundError,))
    def connect(self):
        self.accelerator.wait_for_everyone()
        index = json.loads((self.root / "index.json").read_text())
        path = self.root / index["shards"][self.accelerator.process_index]
        landed = self.accelerator.reduce(torch.tensor([float(path.exists())]), reduction="sum")
        if landed.item() < self.accelerator.num_processes:
            raise FileNotFoundError("not every shard has landed yet")
        return [int(v) for v in path.read_text().split()]


def main():
    accelerator = Accelerator(cpu=True)
    root = Path(tempfile.gettempdir()) / f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-store"
    root.mkdir(parents=True, exist_ok=True)
    if accelerator.is_main_process:
        (root / "index.json").write_text(json.dumps({"shards": sorted(SHARDS)}))
    name = sorted(SHARDS)[accelerator.process_index]
    fetcher = threading.Thread(target=prefetch, args=(root, name, SHARDS[name]))
    fetcher.start()

    records = ShardStore(accelerator, root).connect()
    fetcher.join()
    model = torch.nn.Linear(1, 1)
    for step in range(3):
        x = torch.tensor([[float(records[step % len(records)])]])
        loss = model(x).pow(2).mean()
        mean_loss = accelerator.reduce(loss.detach(), reduction="mean")
        accelerator.print(f"step {step}: loss {mean_loss.item():.3f}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

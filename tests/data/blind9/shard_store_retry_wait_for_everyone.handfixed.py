# verify: ok
"""Hand-fixed twin of shard_store_retry_wait_for_everyone: only the local read is retried.

``connect()`` waits for the index once, on every process, and then calls ``_read_own_shard()``,
which alone carries ``@retry``: a late shard is re-read on the process that misses it without
running the barrier again.
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

    def connect(self):
        self.accelerator.wait_for_everyone()
        index = json.loads((self.root / "index.json").read_text())
        return self._read_own_shard(index["shards"][self.accelerator.process_index])

    @retry(times=3, delay=0.4, exceptions=(FileNotFoundError,))
    def _read_own_shard(self, name):
        return [int(v) for v in (self.root / name).read_text().split()]


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

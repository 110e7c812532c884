# verify: hang
"""A retried ``connect()`` whose ``wait_for_everyone()`` reruns on the process whose shard is late.

Modelled on vllm-project/vllm-ascend#14121
(https://github.com/vllm-project/vllm-ascend/issues/14121: ranks "complete, fail, and retry
initialization at different times", so the ranks that succeeded enter later collectives while a
peer is still re-running the initialisation) and jd/tenacity-style retry decorators around I/O.
``ShardStore.connect()`` waits for the main process to publish the index (``wait_for_everyone()``),
then reads this process's shard, which its own prefetch thread copies into the store. It is
decorated with ``@retry(times=3, delay=0.4, exceptions=(FileNotFoundError,))`` from
``mod_retry.py``. Process 1's shard is the larger one and lands 0.6 s after the prefetch starts:
its first read fails, and the retry calls ``wait_for_everyone()`` again on process 1 alone while
process 0 is already reducing losses.
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

    @retry(times=3, delay=0.4, exceptions=(FileNotFoundError,))
    def connect(self):
        self.accelerator.wait_for_everyone()  # expect: BCL005
        index = json.loads((self.root / "index.json").read_text())
        name = index["shards"][self.accelerator.process_index]
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

# verify: ok nproc=1 nnodes=2
"""Hand fix: the shared feature cache is built under `main_process_first()`, not the local variant.

Modelled on https://github.com/foundation-model-stack/fms-hf-tuning/pull/506: dataset
preparation ran inside `local_main_process_first()`, so on a multi-node job with a shared cache
directory every node's local main process prepared at the same time, and a process on one node
read cache files that another node was still writing (`FileNotFoundError`); the fix went back to
`main_process_first()`.

As in the report's fix, the global main process builds the cache while every other process
waits at the opening barrier; the other node's process then loses the `os.makedirs` claim and
loads a finished file.
"""
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator

SHARED = os.path.join(
    tempfile.gettempdir(), f"blind40-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-shared"
)


def tokenize_corpus():
    time.sleep(3.0)  # the slow part: tokenizing the raw corpus
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=g)
    return {"x": x, "y": x.sum(1, keepdim=True)}


def cached_features(cache_dir):
    try:
        os.makedirs(cache_dir)  # whoever creates the folder builds the cache
    except FileExistsError:
        return torch.load(os.path.join(cache_dir, "features.pt"))
    feats = tokenize_corpus()
    torch.save(feats, os.path.join(cache_dir, "features.pt"))
    return feats


def main():
    accelerator = Accelerator(cpu=True)
    with accelerator.main_process_first():
        feats = cached_features(os.path.join(SHARED, "features-v1"))
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = accelerator.prepare(model, opt)
    rows = range(accelerator.process_index, 32, accelerator.num_processes)
    x, y = feats["x"][list(rows)], feats["y"][list(rows)]
    for step in range(4):
        loss = torch.nn.functional.mse_loss(model(x[step * 4: step * 4 + 4]), y[step * 4: step * 4 + 4])
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    accelerator.wait_for_everyone()
    shutil.rmtree(SHARED, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()

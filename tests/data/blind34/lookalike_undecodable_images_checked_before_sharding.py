# verify: ok
"""Undecodable images skipped with try/except, but in a check of every file before the loader.

Looks like undecodable_images_dropped_in_collate_gather_for_metrics: a `try`/`except ValueError`
around decoding skips the truncated image, and `gather_for_metrics` gathers each batch. But the
check runs over the whole file list on every process before accelerate shards it, so every
process drops the same file; accelerate then splits the 15 remaining images (its even batches
repeat rows from the start to fill the last round, and `gather_for_metrics` drops them again),
and every gathered batch has the same number of rows on each process.
"""
import os
import shutil
import tempfile

import numpy as np
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset

SHAPE = (3, 8, 8)
N_IMAGES = 16
TRUNCATED = 5  # in the second batch of 4, which accelerate hands to process 1


def image_dir():
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return os.path.join(tempfile.gettempdir(), f"blind34-{tag}-images")


def write_images(root):
    os.makedirs(root, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    for i in range(N_IMAGES):
        pixels = torch.randint(0, 256, SHAPE, generator=g, dtype=torch.uint8).numpy().tobytes()
        if i == TRUNCATED:
            pixels = pixels[: len(pixels) // 2]  # an upload cut short
        with open(os.path.join(root, f"{i:03d}.raw"), "wb") as f:
            f.write(pixels)


def decodable(path):
    try:
        decode(path)
    except ValueError:
        print(f"{os.path.basename(path)} cannot be decoded. Skipping.")
        return False
    return True


class RawImages(Dataset):
    def __init__(self, root):
        self.paths = [p for p in sorted(os.path.join(root, n) for n in os.listdir(root)) if decodable(p)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.paths[i], i % 3


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    pixels = np.frombuffer(data, dtype=np.uint8).reshape(SHAPE)  # ValueError when truncated
    return torch.from_numpy(pixels.copy()).float() / 255


def collate_decoded(rows):
    return torch.stack([decode(path) for path, _ in rows]), torch.tensor([label for _, label in rows])


def main():
    accelerator = Accelerator(cpu=True)
    root = image_dir()
    with accelerator.main_process_first():
        if not os.path.exists(os.path.join(root, f"{N_IMAGES - 1:03d}.raw")):
            write_images(root)

    torch.manual_seed(0)
    model = torch.nn.Linear(3 * 8 * 8, 3)
    loader = DataLoader(RawImages(root), batch_size=4, collate_fn=collate_decoded)
    model, loader = accelerator.prepare(model, loader)

    model.eval()
    hits = []
    with torch.no_grad():
        for images, labels in loader:
            preds = model(images.flatten(1)).argmax(-1)
            preds, labels = accelerator.gather_for_metrics((preds, labels))
            hits.append((preds == labels).float())
    accuracy = torch.cat(hits).mean().item()
    accelerator.print(f"accuracy {accuracy:.3f}")

    accelerator.wait_for_everyone()
    shutil.rmtree(root, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()

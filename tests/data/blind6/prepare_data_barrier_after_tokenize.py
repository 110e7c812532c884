# verify: hang
"""A LightningDataModule whose prepare_data() "makes the other ranks wait" with its own barrier.

Modelled on Lightning-AI/pytorch-lightning#19266
(https://github.com/Lightning-AI/pytorch-lightning/issues/19266) and the PR that answered it,
Lightning-AI/pytorch-lightning#19448 (https://github.com/Lightning-AI/pytorch-lightning/pull/19448):
`prepare_data()` runs on local rank 0 only, while the Trainer holds every other process in a
barrier of its own until the hook returns. The data module below tokenizes a corpus into a
shared cache file and then, to be sure that nobody reads a half-written cache, calls
`torch.distributed.barrier()` at the end of `prepare_data()`. Only local rank 0 ever runs that
hook, so only rank 0 reaches the barrier; rank 1 waits in the Trainer's own barrier (another
process group) and neither gets past.
"""
import json
import os
import tempfile
from dataclasses import dataclass

import lightning.pytorch as pl
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

CORPUS = [
    "the cat sat on the mat",
    "a dog barked at the postman",
    "rain fell on the quiet town",
    "the market opened early today",
    "she painted the fence blue",
    "the river rose after the storm",
    "he fixed the old radio",
    "birds sang before dawn",
]


@dataclass
class DataConfig:
    max_len: int = 8
    batch_size: int = 2
    vocab_size: int = 64


def shared_dir(name: str) -> str:
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    path = os.path.join(tempfile.gettempdir(), f"blind6-{name}-{job}")
    os.makedirs(path, exist_ok=True)
    return path


def tokenize(line: str, cfg: DataConfig) -> list[int]:
    ids = [1 + (sum(map(ord, word)) % (cfg.vocab_size - 1)) for word in line.split()]
    return (ids + [0] * cfg.max_len)[: cfg.max_len]


class CorpusDataModule(pl.LightningDataModule):
    def __init__(self, cfg: DataConfig, cache_dir: str):
        super().__init__()
        self.cfg = cfg
        self.cache_file = os.path.join(cache_dir, f"tokens-{cfg.max_len}.json")
        self.train_set = None

    def prepare_data(self):
        if not os.path.exists(self.cache_file):
            rows = [tokenize(line, self.cfg) for line in CORPUS]
            tmp = self.cache_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump(rows, f)
            os.replace(tmp, self.cache_file)
        # make sure the other ranks do not read the cache before it is complete
        if dist.is_available() and dist.is_initialized():
            dist.barrier()  # expect: BCL005

    def setup(self, stage: str):
        with open(self.cache_file) as f:
            rows = json.load(f)
        ids = torch.tensor(rows, dtype=torch.long)
        self.train_set = TensorDataset(ids[:, :-1], ids[:, 1:])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.cfg.batch_size)


class TinyLM(pl.LightningModule):
    def __init__(self, cfg: DataConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab_size, 16)
        self.head = nn.Linear(16, cfg.vocab_size)

    def training_step(self, batch, batch_idx):
        inputs, targets = batch
        logits = self.head(self.embed(inputs))
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    cfg = DataConfig()
    work = shared_dir("prepare-data")
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=work,
    )
    trainer.fit(TinyLM(cfg), datamodule=CorpusDataModule(cfg, work))


if __name__ == "__main__":
    main()

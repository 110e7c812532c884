# verify: ok
"""Hand fix: an epoch is a fixed number of transitions; an episode that is not done carries on.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/9851 (DDP training stuck at
96% of the epoch; the maintainers' diagnosis: the processes had an uneven number of batches, and
DDP hangs when they do).

Like Lightning's DQN example, the training data is an `IterableDataset` that plays episodes and
yields their transitions. An epoch is `EPISODES` episodes, each played until the environment says
done; the second process's environment keeps its episodes going longer, so its loader yields more
batches, and its extra training step's gradient all-reduce waits for a process that has left the
epoch.
"""
import os
import random
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader, IterableDataset

STEPS_PER_EPOCH = 32


class EpisodeStream(IterableDataset):
    def __init__(self, env_seed):
        self.env_seed = env_seed

    def __iter__(self):
        rng = random.Random(self.env_seed)
        survive = 0.6 if self.env_seed % 2 == 0 else 0.95  # the second environment is easier
        episode_step = 0
        for _ in range(STEPS_PER_EPOCH):
            yield torch.randn(4), torch.tensor(1.0)
            episode_step = 0 if rng.random() > survive else episode_step + 1  # done: reset, go on


class ValueNet(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        obs, ret = batch
        return torch.nn.functional.mse_loss(self.net(obs).squeeze(1), ret)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    root = os.path.join(tempfile.gettempdir(), f"blind41-{addr}-{port}-run")
    os.makedirs(root, exist_ok=True)
    env_seed = 6000 + int(os.environ["RANK"])
    loader = DataLoader(EpisodeStream(env_seed), batch_size=4)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, default_root_dir=root,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(ValueNet(), loader)
    print(f"rank {trainer.global_rank}: {trainer.global_step} steps")
    trainer.strategy.barrier()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

# verify: error
"""Table fetched by the main process only, then broadcast from an attribute left at None elsewhere.

Modelled on horovod/horovod#248 (https://github.com/horovod/horovod/issues/248): the training
table is read "remotely via ftp" on rank 0 only (`if hvd.rank() == 0: df_train = ...`), then
`hvd.broadcast(df_train, 0)` runs on every rank, and the other ranks fail because `df_train` was
never assigned there ("hvd.broadcast requires data dimensions to be known before it is
executed").

Here the same idea sits in a small data class used with accelerate: `RemoteTable.__init__` sets
`self.features = None` and `self.labels = None`; `fetch()` lets the main process download the
table (one request per job instead of one per process) and then shares it with
`accelerate.utils.broadcast(self.features)`.

Where the ranks part ways: the attributes are filled under `if self.accelerator.is_main_process:`
only, so on process 1 `broadcast` is handed `None`: accelerate raises `TypeError: Unsupported
types (<class 'NoneType'>) passed to `_gpu_broadcast_one`` there, and process 0, already inside
the broadcast, loses its peer.
"""
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

N_ROWS = 24
N_FEATURES = 5


def download_table():
    """Stands in for the FTP download of the training table (rows of features and a label)."""
    g = torch.Generator().manual_seed(7)
    features = torch.randn(N_ROWS, N_FEATURES, generator=g)
    labels = (features[:, 0] + 0.5 * features[:, 1] > 0).long()
    return features, labels


class RemoteTable:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.features = None
        self.labels = None

    def fetch(self):
        # one download per job: the main process fetches, everybody gets a copy
        if self.accelerator.is_main_process:
            self.features, self.labels = download_table()
        self.features = broadcast(self.features)  # expect: BCL001
        self.labels = broadcast(self.labels)
        return self

    def loader(self, batch_size):
        return DataLoader(TensorDataset(self.features, self.labels), batch_size=batch_size, shuffle=False)


def main():
    accelerator = Accelerator(cpu=True)
    table = RemoteTable(accelerator).fetch()
    model = nn.Sequential(nn.Linear(N_FEATURES, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, loader = accelerator.prepare(model, opt, table.loader(batch_size=4))
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
        mean_loss = accelerator.reduce(loss.detach(), reduction="mean")
        accelerator.print(f"epoch {epoch}: loss {mean_loss.item():.4f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()

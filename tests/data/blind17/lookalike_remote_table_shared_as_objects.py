# verify: ok
"""Look-alike: the same main-only fetch into attributes left at None, shared as objects.

The same `RemoteTable` as remote_table_attr_none_until_fetched: `__init__` sets the attributes to
`None` and only the main process downloads the table. But `fetch()` shares the pair with
`broadcast_object_list([self.features, self.labels])`, which pickles whatever the main process
holds and overwrites every other process's list entries, `None` included; the tensor broadcast
that needs a filled placeholder is not used.
"""
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast_object_list
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
        shared = broadcast_object_list([self.features, self.labels])
        self.features, self.labels = shared
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

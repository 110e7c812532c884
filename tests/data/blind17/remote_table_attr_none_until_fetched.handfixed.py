# verify: ok
"""Hand fix of remote_table_attr_none_until_fetched: share the shapes, then the tensors.

Modelled on horovod/horovod#248 (https://github.com/horovod/horovod/issues/248), whose reporter
found that the broadcast "requires data dimensions to be known before it is executed". The main
process still downloads the table alone; it first shares the two shapes and dtypes with
`broadcast_object_list`, every other process allocates zero-filled tensors of those shapes, and
`broadcast` then fills them with the main process's values.
"""
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast, broadcast_object_list
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
            meta = [(tuple(t.shape), t.dtype) for t in (self.features, self.labels)]
        else:
            meta = [None, None]
        broadcast_object_list(meta)
        if not self.accelerator.is_main_process:
            self.features, self.labels = (torch.zeros(shape, dtype=dtype) for shape, dtype in meta)
        self.features = broadcast(self.features)
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

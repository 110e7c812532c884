# verify: ok
"""Hand fix of best_checkpoint_isfile_before_writer_done.py: every process waits after
`save_best` until the main process has written the checkpoint, so all of them find it.
"""
import os
import shutil
import tempfile

import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind26-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-best",
)
BEST = os.path.join(RUN_DIR, "best.pt")


def make_data(seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 12, generator=gen)
    return TensorDataset(x, x[:, :3].sum(1, keepdim=True))


def recalibrate_bn(model, loader, accelerator):
    bn = accelerator.unwrap_model(model)[1]
    feats = torch.cat([accelerator.unwrap_model(model)[0](xb) for xb, _ in loader])
    stats = torch.stack([feats.mean(0), feats.var(0)])
    stats = accelerator.reduce(stats, reduction="mean")
    bn.running_mean.copy_(stats[0])
    bn.running_var.copy_(stats[1])


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(make_data(3), batch_size=8)
    model, opt, loader = accelerator.prepare(model, opt, loader)
    os.makedirs(RUN_DIR, exist_ok=True)

    @accelerator.on_main_process
    def save_best(state):
        state["feature_bank"] = state["feature_bank"].sort().values
        tmp = BEST + ".tmp"
        torch.save(state, tmp)
        os.replace(tmp, BEST)

    best, best_state = float("inf"), None
    for epoch in range(3):
        total = 0.0
        for xb, yb in loader:
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
            total += loss.item()
        if total < best:
            best = total
            best_state = {k: v.clone() for k, v in accelerator.unwrap_model(model).state_dict().items()}

    save_best({"model": best_state, "optimizer": opt.state_dict(), "feature_bank": torch.randn(8_000_000)})
    accelerator.wait_for_everyone()

    model.eval()
    with torch.no_grad():
        if os.path.isfile(BEST):
            recalibrate_bn(model, loader, accelerator)
    accelerator.print("finished")
    accelerator.wait_for_everyone()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

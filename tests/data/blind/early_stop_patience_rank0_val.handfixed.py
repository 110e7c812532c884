# verify: ok
"""The main process broadcasts its validation loss before every process steps the same
EarlyStopping object, so all stop at the same epoch."""
import torch
import torch.distributed as dist


class EarlyStopping:
    def __init__(self, patience):
        self.patience = patience
        self.best = float("inf")
        self.bad_epochs = 0

    def step(self, value):
        if value < self.best:
            self.best, self.bad_epochs = value, 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def train_one_epoch(model, opt, data):
    for x, y in data:
        opt.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    xs = torch.randn(4, 8, 1)
    data = [(x, 3 * x) for x in xs]
    val_x = torch.linspace(-1, 1, 16).unsqueeze(1)
    stopper = EarlyStopping(patience=2)
    for epoch in range(6):
        train_one_epoch(model, opt, data)
        val = torch.zeros(1)
        if rank == 0:
            with torch.no_grad():
                val[0] = (model(val_x) - 3 * val_x).pow(2).mean()
        dist.broadcast(val, src=0)
        val_loss = val.item()
        if stopper.step(val_loss):
            print(f"rank {rank}: early stop at epoch {epoch}")
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Looks like early stopping decided from the main process's validation, but the stop decision is
made on the main process and shared with a broadcast before anyone leaves the loop."""
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


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    xs = torch.randn(4, 8, 1)
    val_x = torch.linspace(-1, 1, 16).unsqueeze(1)
    stopper = EarlyStopping(patience=2)
    for epoch in range(6):
        for x in xs:
            opt.zero_grad()
            (model(x) - 3 * x).pow(2).mean().backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
            opt.step()
        stop = torch.zeros(1)
        if rank == 0:
            with torch.no_grad():
                val_loss = (model(val_x) - 3 * val_x).pow(2).mean().item()
            stop[0] = float(stopper.step(val_loss))
        dist.broadcast(stop, src=0)
        if stop.item():
            print(f"rank {rank}: early stop at epoch {epoch}")
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: error
"""Forward hooks installed by a run logger on rank 0 only, each hook all-reducing its statistic.

Modelled on https://github.com/mosaicml/composer/issues/239: rank-zero-only callbacks and loggers
"cannot make any calls to `composer.utils.dist`. This has led to bugs where the entire training
process hangs."

`RunLogger.watch(model)` (in the manner of `wandb.watch`) registers a forward hook on every
`Linear` that records the mean absolute activation, all-reduced "so that the number logged covers
the global batch". The logger is only enabled on rank 0, and `watch()` returns at once where it
is disabled, so the hooks, and the all_reduce inside them, run in rank 0's forward passes only;
rank 1 goes straight on to DDP's gradient all-reduce.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class RunLogger:
    def __init__(self, enabled):
        self.enabled = enabled
        self.activations = {}

    def watch(self, model):
        if not self.enabled:
            return
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear):
                module.register_forward_hook(self._recorder(name))

    def _recorder(self, name):
        def hook(module, inputs, output):
            value = output.detach().abs().mean().reshape(1)
            dist.all_reduce(value)  # expect: BCL005
            self.activations[name] = value.item() / dist.get_world_size()
        return hook

    def log(self, step, loss):
        if self.enabled:
            stats = ", ".join(f"{k}={v:.3f}" for k, v in self.activations.items())
            print(f"step {step}: loss {loss:.4f} | {stats}")


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    logger = RunLogger(enabled=rank == 0)
    logger.watch(net)
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(rank)
    for step in range(5):
        x, y = torch.randn(4, 8, generator=g), torch.randn(4, 1, generator=g)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        logger.log(step, loss.item())
    checksum = torch.cat([p.detach().flatten() for p in model.parameters()]).sum().reshape(1)
    dist.all_reduce(checksum)
    logger.log("final", checksum.item() / dist.get_world_size())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

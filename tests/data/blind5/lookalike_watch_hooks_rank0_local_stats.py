# verify: ok
"""Look-alike of watch_hooks_rank0_allreduce.py: correct.

The hooks are still installed on rank 0 only, but each records rank 0's own mean absolute
activation, a local number (as `wandb.watch` does); nothing in them communicates.
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
            self.activations[name] = output.detach().abs().mean().item()
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

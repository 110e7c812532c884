# verify: ok
"""Hand-fixed twin of lazy_seed_broadcast_masked_rank.py.

As in radiocosmology/draco#384 (https://github.com/radiocosmology/draco/pull/384), the seed is
drawn and broadcast in `NoiseInjector.__init__`, which every process runs once, before any data
is looked at; `base_seed` only returns it, so skipping a fully flagged baseline skips no
collective.
"""
import random
from dataclasses import dataclass, field

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast


@dataclass
class SimConfig:
    n_baselines: int = 6
    n_samples: int = 16
    noise_scale: float = 0.1
    bad_antennas: list = field(default_factory=lambda: [3, 4, 5])


class NoiseInjector:
    def __init__(self, accelerator: Accelerator, cfg: SimConfig):
        self.accelerator = accelerator
        self.cfg = cfg
        # every process must perturb with the same realisation: draw once on main, share it now
        if accelerator.is_main_process:
            drawn = torch.tensor([random.randrange(2**31)], dtype=torch.int64)
        else:
            drawn = torch.zeros(1, dtype=torch.int64)
        self._base_seed = int(broadcast(drawn.to(accelerator.device))[0])

    @property
    def base_seed(self) -> int:
        return self._base_seed

    def inject(self, baseline: int, vis: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
        if flags.all():
            return vis  # nothing left to perturb on a fully flagged baseline
        gen = torch.Generator().manual_seed(self.base_seed + baseline)
        noise = torch.randn(vis.shape, generator=gen) * self.cfg.noise_scale
        return torch.where(flags, vis, vis + noise)


def load_baseline(baseline: int, cfg: SimConfig):
    gen = torch.Generator().manual_seed(100 + baseline)
    vis = torch.randn(cfg.n_samples, generator=gen)
    flags = torch.zeros(cfg.n_samples, dtype=torch.bool)
    if baseline in cfg.bad_antennas:
        flags[:] = True
    return vis, flags


def main():
    accelerator = Accelerator()
    cfg = SimConfig()
    injector = NoiseInjector(accelerator, cfg)
    power = torch.zeros(1, dtype=torch.float64, device=accelerator.device)
    with accelerator.split_between_processes(list(range(cfg.n_baselines))) as mine:
        for baseline in mine:
            vis, flags = load_baseline(baseline, cfg)
            vis = injector.inject(baseline, vis, flags)
            power += vis[~flags].pow(2).sum().double()
    total = accelerator.reduce(power, reduction="sum")
    accelerator.print(f"total unflagged power: {total.item():.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

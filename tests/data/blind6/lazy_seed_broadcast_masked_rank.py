# verify: hang
"""A lazily agreed random seed whose broadcast runs at first use, and first use skips masked data.

Modelled on radiocosmology/draco#384 (https://github.com/radiocosmology/draco/pull/384), prompted
by #382: `RandomTask.local_seed` was created on first use with an MPI broadcast, so every rank
had to reach its first use together; a rank whose first baseline was fully masked skipped the
call and the others hung in the broadcast. Here `NoiseInjector.base_seed` is a property that
draws a seed on the main process and shares it with `accelerate.utils.broadcast` the first time
it is read; `inject()` reads it only for baselines that have unflagged samples. Process 1's share
of the baselines (from `split_between_processes`) is entirely flagged, so it never reads the
seed, and process 0's broadcast meets process 1's next collective, the final `reduce` (8 bytes
each, so gloo does not abort: measured, the job hangs with process 0 in the broadcast and
process 1 in the all-reduce).
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
        self._base_seed = None

    @property
    def base_seed(self) -> int:
        # every process must perturb with the same realisation: draw once on main, share it
        if self._base_seed is None:
            if self.accelerator.is_main_process:
                drawn = torch.tensor([random.randrange(2**31)], dtype=torch.int64)
            else:
                drawn = torch.zeros(1, dtype=torch.int64)
            self._base_seed = int(broadcast(drawn.to(self.accelerator.device))[0])
        return self._base_seed

    def inject(self, baseline: int, vis: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
        if flags.all():
            return vis  # nothing left to perturb on a fully flagged baseline
        gen = torch.Generator().manual_seed(self.base_seed + baseline)  # expect: BCL005
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

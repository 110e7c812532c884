# verify: ok check=EXPERT_LOAD
"""Look-alike: the same per-process modalities, but the meter keeps one row per layer from the start.

`ExpertLoadMeter` allocates a `(layers, experts)` table of zeros in `__init__`, adds each layer's
counts into its own row, and reduces the whole table: a layer a process never routed through is a
row of zeros there, so the rows line up on every process whatever each one saw.

Original docstring of the broken program: expert-load statistics packed in the order of the
layers each process happened to route through.

Modelled on areal-project/AReaL#1693 (https://github.com/areal-project/AReaL/pull/1693), whose
review asked: "What guarantees that all ranks in `reduce_group` have the same ordered layer IDs and
per-layer expert counts at every export? ... equal-length tensors with different layer IDs could
silently aggregate unrelated layers." The metric packed `[self.counts[layer] for layer in
sorted(self.counts)]` and all-reduced it, where `self.counts` held only the layers that had seen
tokens on that rank.

Here a small multimodal mixture-of-experts model has a text block, an image block and a shared
block, each with its own router over four experts; a sample passes through the block of its
modality and the shared one. `split_between_processes` gives process 0 the text samples and
process 1 the image samples, so both processes pack two layers' counts (eight numbers), but
process 0's first four are the text block's and process 1's the image block's. The reduction
succeeds and sums unrelated layers; each process then files the sum under its own layer name.
"""
import torch
import torch.nn as nn
from accelerate import Accelerator

EXPERTS, DIM = 4, 8
LAYERS = {"text": 0, "image": 1, "shared": 2}
SAMPLES = [("text", 3 + i) for i in range(4)] + [("image", 30 + i) for i in range(4)]
EXPERT_LOAD = None


class RoutedBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, EXPERTS)
        self.experts = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(EXPERTS))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        choice = self.router(x).argmax(dim=-1)
        out = torch.stack([self.experts[int(e)](row) for row, e in zip(x, choice)])
        return out, torch.bincount(choice, minlength=EXPERTS).float()


class MultimodalMoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({name: RoutedBlock() for name in LAYERS})

    def forward(self, modality: str, x: torch.Tensor, meter: "ExpertLoadMeter") -> torch.Tensor:
        for name in (modality, "shared"):
            x, counts = self.blocks[name](x)
            meter.add(LAYERS[name], counts)
        return x


class ExpertLoadMeter:
    def __init__(self, accelerator: Accelerator):
        self.accelerator = accelerator
        self.table = torch.zeros(len(LAYERS), EXPERTS)

    def add(self, layer: int, counts: torch.Tensor) -> None:
        self.table[layer] += counts

    def export(self) -> dict[int, list[float]]:
        total = self.accelerator.reduce(self.table.clone(), reduction="sum")
        return {layer: total[layer].tolist() for layer in range(len(LAYERS)) if total[layer].any()}


def tokens_for(seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(6, DIM, generator=g)


def main() -> None:
    global EXPERT_LOAD
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = MultimodalMoE()
    meter = ExpertLoadMeter(accelerator)
    with torch.no_grad(), accelerator.split_between_processes(SAMPLES) as mine:
        for modality, seed in mine:
            model(modality, tokens_for(seed), meter)
    EXPERT_LOAD = meter.export()
    names = {v: k for k, v in LAYERS.items()}
    print(f"process {accelerator.process_index}: " + ", ".join(f"{names[k]}={v}" for k, v in EXPERT_LOAD.items()),
          flush=True)
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()

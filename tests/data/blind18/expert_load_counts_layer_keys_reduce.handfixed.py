# verify: ok check=EXPERT_LOAD
"""Hand fix: the processes first agree on the layout (the union of their layer ids), then reduce.

As AReaL#1693 settled it ("every rank now unconditionally gathers the ordered (global_layer_id,
expert_count) layout within the reduction group before any packed tensor reduction"): the layer
ids are all-gathered with `gather_object`, every process packs the union in the same order, with
zeros for a layer it never routed through, and only then calls `accelerator.reduce`.

Original docstring: expert-load statistics packed in the order of the layers each process happened
to route through.

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
from accelerate.utils import gather_object

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
        self.counts: dict[int, torch.Tensor] = {}

    def add(self, layer: int, counts: torch.Tensor) -> None:
        self.counts[layer] = self.counts.get(layer, torch.zeros(EXPERTS)) + counts

    def export(self) -> dict[int, list[float]]:
        layers = sorted(set(gather_object(sorted(self.counts))))
        packed = torch.cat([self.counts.get(layer, torch.zeros(EXPERTS)) for layer in layers])
        packed = self.accelerator.reduce(packed, reduction="sum")
        return {layer: packed[i * EXPERTS : (i + 1) * EXPERTS].tolist() for i, layer in enumerate(layers)}


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

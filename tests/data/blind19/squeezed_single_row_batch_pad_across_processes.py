# verify: error
"""Evaluation scores squeezed to 0-d on a process whose last batch holds one row.

Modelled on logix-project/logix#43 (https://github.com/logix-project/logix/pull/43) and
NVIDIA/tacotron2#303 (https://github.com/NVIDIA/tacotron2/pull/303): a bare `.squeeze()` on a
`(batch, 1)` output also drops the batch dimension when the last batch has a single row. Here
the evaluation loader is prepared with `even_batches=False` (7 rows, batches of 2: process 0's
last batch has rows 4 and 5, process 1's only row 6), so process 1's scores become a 0-d tensor.
`pad_across_processes` returns a tensor whose `dim` it lacks without gathering the sizes, so the
two processes' gathers fall out of step.
"""
from dataclasses import dataclass

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration
from torch.utils.data import DataLoader, Dataset


@dataclass
class EvalConfig:
    rows: int = 7
    features: int = 6
    batch_size: int = 2
    seed: int = 11


class ScoringSet(Dataset):
    def __init__(self, cfg: EvalConfig):
        g = torch.Generator().manual_seed(cfg.seed)
        self.x = torch.randn(cfg.rows, cfg.features, generator=g)
        self.y = (self.x.sum(dim=1) > 0).float()

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict:
        return {"id": torch.tensor(i), "x": self.x[i], "y": self.y[i]}


class Scorer(torch.nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(features, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def evaluate(accelerator: Accelerator, model: torch.nn.Module, loader: DataLoader) -> dict:
    model.eval()
    ids, scores = [], []
    for batch in loader:
        with torch.no_grad():
            logits = model(batch["x"]).squeeze()
        probs = torch.sigmoid(logits)
        probs = accelerator.pad_across_processes(probs, dim=0, pad_index=-1.0)  # expect: BCL015
        row_ids = accelerator.pad_across_processes(batch["id"], dim=0, pad_index=-1)
        probs, row_ids = accelerator.gather(probs), accelerator.gather(row_ids)
        keep = row_ids >= 0
        ids.append(row_ids[keep])
        scores.append(probs[keep])
    ids, scores = torch.cat(ids), torch.cat(scores)
    return {"rows": int(ids.numel()), "mean_score": float(scores.mean())}


def main() -> None:
    cfg = EvalConfig()
    accelerator = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(even_batches=False))
    torch.manual_seed(cfg.seed)
    model = Scorer(cfg.features)
    loader = DataLoader(ScoringSet(cfg), batch_size=cfg.batch_size, shuffle=False)
    model, loader = accelerator.prepare(model, loader)
    report = evaluate(accelerator, model, loader)
    accelerator.print(f"evaluated {report}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

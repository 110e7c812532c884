# verify: ok
"""Per-language accuracy metrics created the first time a language shows up in the process's rows.

Modelled on Lightning-AI/torchmetrics#3199 (a metric's `compute()` with `sync_on_compute=True`
"hangs ... under Distributed Data-Parallel"; calling `metric.sync()` by hand hangs too): a report
helper keeps one `MulticlassAccuracy` per language in a dict filled with `setdefault` as
languages appear in the process's own evaluation rows, then computes every metric it holds.
Each `compute()` all-gathers the metric's states, and the "fr" rows all fall to process 0.

Hand fix: the metrics are created up front for every language of the evaluation set (the
same list on every process), so every process computes, and synchronises, the same metrics.
"""
import torch
import torch.distributed as dist
from torch import nn
from torchmetrics.classification import MulticlassAccuracy

CLASSES = 3
LANGS = ["en", "de", "fr", "en", "fr", "de", "en", "en", "de", "de"]


class PerLanguageAccuracy:
    def __init__(self, languages):
        self.metrics = {lang: MulticlassAccuracy(num_classes=CLASSES) for lang in sorted(languages)}

    def update(self, langs, preds, target):
        for lang in sorted(set(langs)):
            mask = torch.tensor([lg == lang for lg in langs])
            self.metrics[lang].update(preds[mask], target[mask])

    def compute(self):
        return {lang: metric.compute().item() for lang, metric in sorted(self.metrics.items())}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Linear(6, CLASSES)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(len(LANGS), 6, generator=g)
    y = torch.randint(0, CLASSES, (len(LANGS),), generator=g)
    idx = list(range(rank, len(LANGS), world))
    report = PerLanguageAccuracy(set(LANGS))
    with torch.no_grad():
        for start in range(0, len(idx), 2):
            rows = idx[start:start + 2]
            preds = model(x[rows]).argmax(-1)
            report.update([LANGS[i] for i in rows], preds, y[rows])
    print(f"rank {rank}: {report.compute()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

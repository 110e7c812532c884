# verify: ok
"""Hand fix: the loader is not dispatched; each process reads the stream and keeps its own batches.

`DataLoaderConfiguration(dispatch_batches=False)`, the workaround named in the accelerate threads:
accelerate then wraps the iterable dataset in an `IterableDatasetShard`, every process iterates
the stream itself and keeps its share of each batch, and nothing is concatenated or broadcast, so
the string ids stay in the batch.

Original docstring: a streamed review dataset whose batches carry their document ids as strings,
dispatched by accelerate.

Modelled on huggingface/accelerate#4111 (https://github.com/huggingface/accelerate/issues/4111),
which follows huggingface/accelerate#3849 (https://github.com/huggingface/accelerate/issues/3849):
an `IterableDataset` handed to `accelerator.prepare` gets a `DataLoaderDispatcher`
(`dispatch_batches=True` is the default for iterable datasets). Process 0 alone reads the stream,
concatenates one batch per process and broadcasts the result; a batch field that is not a tensor (a
list of strings from the collator) cannot be concatenated, so process 0 raises inside the loader
while the other processes wait for the batch it was going to broadcast. With one process the same
loader works (the single batch is returned as it is), so single-process tests pass.

Here the collator keeps each row's document id so that the worst-scored reviews can be reported.
"""
import torch
import torch.nn as nn
from accelerate import Accelerator, DataLoaderConfiguration
from torch.utils.data import DataLoader, IterableDataset

VOCAB = 32
RECORDS = [
    {"doc_id": f"review-{i:03d}", "tokens": [(7 * i + k) % VOCAB for k in range(5)], "stars": i % 5}
    for i in range(12)
]


class ReviewStream(IterableDataset):
    def __iter__(self):
        yield from RECORDS


def collate(rows: list[dict]) -> dict:
    bags = torch.zeros(len(rows), VOCAB)
    for i, row in enumerate(rows):
        bags[i, row["tokens"]] = 1.0
    return {
        "doc_ids": [row["doc_id"] for row in rows],
        "bags": bags,
        "stars": torch.tensor([float(row["stars"]) for row in rows]),
    }


class StarRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(VOCAB, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, bags: torch.Tensor) -> torch.Tensor:
        return self.head(bags).squeeze(-1)


def main() -> None:
    accelerator = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(dispatch_batches=False))
    torch.manual_seed(0)
    model = StarRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(ReviewStream(), batch_size=2, collate_fn=collate)
    model, opt, loader = accelerator.prepare(model, opt, loader)

    worst = []
    for epoch in range(2):
        for batch in loader:
            pred = model(batch["bags"])
            errors = (pred - batch["stars"]).abs()
            loss = errors.mean()
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
            i = int(errors.argmax())
            worst.append((float(errors[i]), batch["doc_ids"][i]))
        accelerator.print(f"epoch {epoch}: last loss {loss.item():.3f}")
    worst.sort(reverse=True)
    print(f"process {accelerator.process_index}: worst reviews {[d for _, d in worst[:3]]}", flush=True)
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()

"""The evaluation loader goes through `accelerator.prepare`, which shards it with even batch counts,
and `gather_for_metrics` drops the samples it padded."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(9, 4), torch.randint(0, 2, (9,)))
    model, loader = accelerator.prepare(torch.nn.Linear(4, 2), DataLoader(dataset, batch_size=2))
    correct = 0
    for inputs, labels in loader:
        hits = (model(inputs).argmax(-1) == labels).long()
        correct += accelerator.gather_for_metrics(hits).sum().item()
    accelerator.print(f"accuracy {correct / len(dataset):.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

# verify: hang
"""Evaluation with Accelerate over a DataLoader that was never passed to `accelerator.prepare`:
each process builds its own loader over its slice of nine examples, so rank 0 has three batches
and rank 1 two, and the gather inside the loop is left waiting on rank 0.

Modelled on huggingface/accelerate#157 (https://github.com/huggingface/accelerate/issues/157):
training stuck at the end of an epoch when the evaluation dataloader was not passed to accelerate
and the processes ran different numbers of evaluation steps.
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Subset, TensorDataset


def main():
    accelerator = Accelerator()
    rank, world = accelerator.process_index, accelerator.num_processes
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(9, 4), torch.randint(0, 2, (9,)))
    local_loader = DataLoader(Subset(dataset, range(rank, len(dataset), world)), batch_size=2)
    model = accelerator.prepare(torch.nn.Linear(4, 2))
    correct = 0
    for inputs, labels in local_loader:
        hits = (model(inputs).argmax(-1) == labels).long()
        correct += accelerator.gather(hits).sum().item()  # expect: BCL005
    accelerator.print(f"accuracy {correct / len(dataset):.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()

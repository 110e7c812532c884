# verify: hang
"""The evaluation pass sits under a local alias of the main-process test, and the alias hides that
the helper it calls gathers predictions from every process: only the main process reaches the gather.

Modelled on huggingface/transformers#31532
(https://github.com/huggingface/transformers/issues/31532): evaluation was reached on the main
process only, so `gather_for_metrics` waited forever for the others.
"""
import torch
from accelerate import Accelerator


def evaluate(accelerator, model, batches):
    hits = []
    for inputs, labels in batches:
        preds = model(inputs).argmax(dim=-1)
        hits.append(accelerator.gather_for_metrics((preds == labels).float()))
    return torch.cat(hits).mean().item()


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
    is_main = accelerator.is_main_process
    for epoch in range(2):
        for inputs, labels in batches:
            loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if is_main:
            accuracy = evaluate(accelerator, model, batches)  # expect: BCL005
            print(f"epoch {epoch}: accuracy {accuracy:.3f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()

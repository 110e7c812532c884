# verify: ok check=PARAM_SUM
"""Hand fix of warm_start_callback_world_zero_after_wrap: every process loads the warm start.

The callback still loads in `on_train_begin`, after DDP has wrapped the model, but on every
process, so the replicas start from the same weights; the file is written before the Trainer is
built and read only after `Trainer.train()` has synchronised the processes.
"""
import os
import shutil
import tempfile
from pathlib import Path

import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

WORK = Path(tempfile.gettempdir()) / f"blind25-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-warm"
PARAM_SUM = None


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        out = self.proj(x).squeeze(-1)
        return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}


class WarmStart(TrainerCallback):
    def __init__(self, path: Path):
        self.path = path

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        model.load_state_dict(torch.load(self.path))


def rows(n: int):
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([1.0, -1.0, 0.5, 2.0])
    return [{"x": x[i], "labels": y[i]} for i in range(n)]


def main() -> None:
    global PARAM_SUM
    args = TrainingArguments(
        output_dir=str(WORK), per_device_train_batch_size=4, max_steps=4, learning_rate=0.05,
        lr_scheduler_type="constant", optim="sgd", use_cpu=True, report_to=[], save_strategy="no",
        logging_strategy="no", disable_tqdm=True, remove_unused_columns=False, seed=0,
    )
    torch.manual_seed(0)
    model = Scorer()
    warm = WORK / "warm_start.pt"
    if args.process_index == 0:
        WORK.mkdir(parents=True, exist_ok=True)
        pretrained = Scorer()
        with torch.no_grad():
            pretrained.proj.weight.copy_(torch.tensor([[0.9, -1.1, 0.4, 1.8]]))
        torch.save(pretrained.state_dict(), warm)
    trainer = Trainer(model=model, args=args, train_dataset=rows(32), callbacks=[WarmStart(warm)])
    trainer.train()
    PARAM_SUM = round(sum(p.sum().item() for p in model.parameters()), 4)
    print(f"process {args.process_index} PARAM_SUM {PARAM_SUM}", flush=True)
    trainer.accelerator.wait_for_everyone()
    if args.process_index == 0:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()

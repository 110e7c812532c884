# verify: ok check=UNCAPTIONED_TOTAL
"""Look-alike: the same collator that drops `input_ids`, and an all-reduce in a `TrainerCallback.on_log`.

As in tokens_seen_gather_uncaptioned_batch_skips.py, the collator leaves `input_ids` out of the
uncaptioned batch that process 1 draws, and it counts the uncaptioned images this process has
seen. `UncaptionedCount.on_log` all-reduces that local count. The `Trainer` calls `on_log` on
every process at the same steps (`should_log` follows the global step), and the token count is
not tracked (`include_num_input_tokens_seen` is left at "no"), so every process runs the same
collectives; the total (`UNCAPTIONED_TOTAL`) agrees.
"""
import os
import shutil
import tempfile

import torch
from torch import nn
import torch.distributed as dist
from transformers import Trainer, TrainerCallback, TrainingArguments

OUT = os.path.join(
    tempfile.gettempdir(),
    f"blind27-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-captions-log",
)
CAPTIONS = [[3, 4, 5], [6, 7], [8, 9, 10], [11, 12], [3, 9], [4, 5, 6], None, None]
UNCAPTIONED = [0]  # this process's count
UNCAPTIONED_TOTAL = None


class ImageCaptionDataset(torch.utils.data.Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.pixels = torch.randn(len(CAPTIONS), 12, generator=g)

    def __len__(self):
        return len(CAPTIONS)

    def __getitem__(self, i):
        return {"pixel_values": self.pixels[i], "caption": CAPTIONS[i], "label": i % 2}


def collate(rows):
    batch = {
        "pixel_values": torch.stack([r["pixel_values"] for r in rows]),
        "labels": torch.tensor([r["label"] for r in rows]),
    }
    UNCAPTIONED[0] += sum(r["caption"] is None for r in rows)
    if any(r["caption"] for r in rows):
        width = max(len(r["caption"] or []) for r in rows)
        batch["input_ids"] = torch.tensor(
            [(r["caption"] or []) + [0] * (width - len(r["caption"] or [])) for r in rows]
        )
    return batch


class UncaptionedCount(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        global UNCAPTIONED_TOTAL
        total = torch.tensor([float(UNCAPTIONED[0])])
        dist.all_reduce(total)
        UNCAPTIONED_TOTAL = int(total.item())
        if state.is_world_process_zero:
            print(f"step {state.global_step}: {UNCAPTIONED_TOTAL} uncaptioned images so far")


class CaptionedClassifier(nn.Module):
    main_input_name = "input_ids"

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.patch = nn.Linear(12, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, pixel_values, labels, input_ids=None):
        h = self.patch(pixel_values)
        if input_ids is not None:
            h = h + self.embed(input_ids).mean(1)
        logits = self.head(torch.tanh(h))
        return {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits}


def main():
    args = TrainingArguments(
        output_dir=OUT, per_device_train_batch_size=2, num_train_epochs=1, learning_rate=0.05,
        train_sampling_strategy="sequential",
        ddp_find_unused_parameters=True, use_cpu=True, report_to=[], save_strategy="no",
        logging_steps=1, disable_tqdm=True, remove_unused_columns=False,
    )
    trainer = Trainer(
        model=CaptionedClassifier(), args=args, train_dataset=ImageCaptionDataset(),
        data_collator=collate, callbacks=[UncaptionedCount()],
    )
    trainer.train()
    trainer.accelerator.wait_for_everyone()
    print(f"[process {args.process_index}] uncaptioned images: {UNCAPTIONED_TOTAL}")
    if args.process_index == 0:
        shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()

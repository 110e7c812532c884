# verify: ok
"""Hand fix of tokens_seen_gather_uncaptioned_batch_skips.py: every batch carries `input_ids`.

An uncaptioned image gets the one-token caption `[NO_CAPTION]`, so every batch holds the model's
`main_input_name` and every process joins the token-count gather of every step.

Original description: `include_num_input_tokens_seen` with a collator that leaves out
`input_ids` for uncaptioned images.

Modelled on https://github.com/huggingface/transformers/pull/31974: the all-gather behind
`TrainingArguments(include_num_input_tokens_seen=...)` kept getting training stuck under DDP (after
#29099 had fixed the gather of unequal lengths): it is a collective in every training step, and
anything that changes it on one process alone derails the job.

The `Trainer` counts tokens with `self.accelerator.gather(...)` in each step, but only when the
batch holds the model's `main_input_name` (`input_ids`); otherwise it logs a warning and skips the
gather. The collator adds `input_ids` only when a row of the batch has a caption. With
`train_sampling_strategy="sequential"`, batches of 2 go to the processes in turn and the two
uncaptioned images (rows 6 and 7) form process 1's second batch: in step 2 process 0 gathers its
token count while process 1 goes straight to DDP's backward.
"""
import os
import shutil
import tempfile

import torch
from torch import nn
from transformers import Trainer, TrainingArguments

OUT = os.path.join(
    tempfile.gettempdir(),
    f"blind27-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-captions",
)
CAPTIONS = [[3, 4, 5], [6, 7], [8, 9, 10], [11, 12], [3, 9], [4, 5, 6], None, None]
NO_CAPTION = 1


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
    captions = [r["caption"] or [NO_CAPTION] for r in rows]
    width = max(len(c) for c in captions)
    batch["input_ids"] = torch.tensor([c + [0] * (width - len(c)) for c in captions])
    return batch


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
        include_num_input_tokens_seen="all", train_sampling_strategy="sequential",
        ddp_find_unused_parameters=True, use_cpu=True, report_to=[], save_strategy="no",
        logging_steps=1, disable_tqdm=True, remove_unused_columns=False,
    )
    trainer = Trainer(
        model=CaptionedClassifier(), args=args, train_dataset=ImageCaptionDataset(),
        data_collator=collate,
    )
    trainer.train()
    trainer.accelerator.wait_for_everyone()
    print(f"[process {args.process_index}] tokens seen: {trainer.state.num_input_tokens_seen}")
    if args.process_index == 0:
        shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()

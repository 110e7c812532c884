# verify: ok
"""Look-alike: the same token interval, read from the Trainer's all-process token count.

Modelled on https://github.com/speechbrain/speechbrain/pull/2192 ("Broadcast the decision to
checkpoint to all processes"): the decision to checkpoint was taken per process (there, from
each process's clock), and a checkpoint runs collectives, so processes that decided differently
hung. Here a `TrainerCallback` sets `control.should_save` once the tokens this process collated
cross an interval; `Trainer._save_checkpoint` starts with `store_flos()`, a gather.
"""
import os
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments

VOCAB = 32
SAVE_EVERY_TOKENS = 120


class TokenCounter:
    seen = 0


class VarLenDataset(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, idx):
        length = 3 + (idx * 7) % 17
        return {"input_ids": torch.arange(length) % VOCAB}


def collate(samples, counter=TokenCounter):
    width = max(len(s["input_ids"]) for s in samples)
    ids = torch.zeros(len(samples), width, dtype=torch.long)
    mask = torch.zeros(len(samples), width, dtype=torch.long)
    for row, s in enumerate(samples):
        ids[row, : len(s["input_ids"])] = s["input_ids"]
        mask[row, : len(s["input_ids"])] = 1
    counter.seen += int(mask.sum())
    return {"input_ids": ids, "attention_mask": mask, "labels": ids.clone()}


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 8)
        self.head = torch.nn.Linear(8, VOCAB)

    def forward(self, input_ids, attention_mask, labels):
        logits = self.head(self.emb(input_ids))
        loss = torch.nn.functional.cross_entropy(
            logits.view(-1, VOCAB), labels.view(-1), reduction="none"
        )
        mask = attention_mask.view(-1).float()
        return {"loss": (loss * mask).sum() / mask.sum(), "logits": logits}


class TokenIntervalCheckpoint(TrainerCallback):
    def __init__(self, every):
        self.every = every
        self.next_save = every

    def on_step_end(self, args, state, control, **kwargs):
        if state.num_input_tokens_seen >= self.next_save:  # gathered over every process
            self.next_save += self.every
            control.should_save = True
        return control


def main():
    run_dir = os.path.join(
        tempfile.gettempdir(),
        f"blind20-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}",
        "token_interval",
    )
    args = TrainingArguments(
        output_dir=run_dir, per_device_train_batch_size=2, max_steps=6, save_strategy="no",
        logging_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True, seed=0,
        dataloader_num_workers=0, include_num_input_tokens_seen="non_padding",
    )
    trainer = Trainer(
        model=TinyLM(), args=args, train_dataset=VarLenDataset(), data_collator=collate,
        callbacks=[TokenIntervalCheckpoint(SAVE_EVERY_TOKENS)],
    )
    trainer.train()
    print(f"process {args.process_index} collated {TokenCounter.seen} tokens")


if __name__ == "__main__":
    main()

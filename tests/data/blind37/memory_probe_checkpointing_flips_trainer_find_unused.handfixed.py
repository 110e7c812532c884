# verify: ok
"""Hand fix: `ddp_find_unused_parameters=False` is given to the Trainer, so its DDP wrapper is built
alike on every process, whichever of them switched gradient checkpointing on (non-reentrant
checkpointing changes no collective).

The broken version: gradient checkpointing switched on by a per-process memory probe, before the Trainer is built.

Modelled on huggingface/transformers#13961 (https://github.com/huggingface/transformers/pull/13961):
the Trainer turns DDP's `find_unused_parameters` off when the model has gradient checkpointing on
(the two break each other), and on otherwise, for a `PreTrainedModel` when the argument is not given.

Here the set-up estimates the activation cost of the rows this process probes (`split_between_processes`
of the calibration rows: short rows on process 0, long rows on process 1) and calls
`model.gradient_checkpointing_enable()` when the estimate is over budget. Only process 1 does, so the
Trainer builds DDP with `find_unused_parameters=False` there and `True` on process 0, and the two DDP
reducers run different collectives in the first backward: process 0 (unused-parameter search on)
waits in the backward for one more all-reduce, while process 1 finishes its step and goes on to the
next step's all-gather (the Trainer counting the batch's label tokens).
"""
import os
import shutil
import tempfile

import torch
from accelerate import PartialState
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind37-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-run",
)
SEQ, BATCH, TOKEN_BUDGET = 16, 2, 24


def make_rows():
    g = torch.Generator().manual_seed(0)
    rows = []
    for n in [6, 8, 7, 9, 10, 6, 8, 7, 15, 16, 14, 16, 15, 16, 14, 16]:
        ids = torch.zeros(SEQ, dtype=torch.long)
        ids[:n] = torch.randint(1, 64, (n,), generator=g)
        labels = ids.clone()
        labels[n:] = -100
        rows.append({"input_ids": ids, "labels": labels, "attention_mask": (labels != -100).long()})
    return rows


def main():
    state = PartialState(cpu=True)
    rows = make_rows()
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=SEQ, n_embd=16, n_layer=2, n_head=2,
                                       bos_token_id=0, eos_token_id=0))
    with state.split_between_processes(rows) as probe_rows:
        longest = max(int(r["attention_mask"].sum()) for r in probe_rows)
    if longest * BATCH > TOKEN_BUDGET:
        model.gradient_checkpointing_enable()
    print(f"process {state.process_index}: longest probe row {longest}, "
          f"checkpointing {model.is_activation_checkpointing}", flush=True)

    args = TrainingArguments(
        output_dir=RUN_DIR, per_device_train_batch_size=BATCH, max_steps=4, learning_rate=1e-3,
        save_strategy="no", logging_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0,
        ddp_find_unused_parameters=False,
    )
    trainer = Trainer(model=model, args=args, train_dataset=rows)
    trainer.train()
    state.wait_for_everyone()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix: the cached state dict is loaded by copying into the new model's parameters (the default,
`assign=False`), which keeps `lm_head.weight` tied to `transformer.wte.weight`.

The broken version: a shared initialisation cache: the first process builds the model and saves it, the others load it.

Modelled on pytorch/pytorch#188346 (https://github.com/pytorch/pytorch/issues/188346):
`load_state_dict(state_dict, assign=True)` gives each name its own new Parameter, so weights that
were tied (a language model's input embedding and output head) stop being one parameter, and
`named_parameters()` yields both.

Here the set-up runs inside `accelerator.main_process_first()`: the main process finds no cache,
builds the GPT-2 model from a fixed seed and saves its state dict; the other process then finds the
file and loads it into a fresh model with `assign=True` (to skip a copy). On the main process
`lm_head.weight` is `transformer.wte.weight` (16 parameters); on the other it is a second parameter
(17). `accelerator.prepare` wraps the model in DDP, whose start-up check compares the two lists.
"""
import os
import shutil
import tempfile

import torch
from accelerate import Accelerator
from transformers import GPT2Config, GPT2LMHeadModel

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind37-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-init",
)


def config():
    return GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=1, n_head=2,
                      bos_token_id=0, eos_token_id=0)


def build_or_load(path):
    model = GPT2LMHeadModel(config())
    if os.path.exists(path):
        model.load_state_dict(torch.load(path))
    else:
        torch.manual_seed(0)
        model = GPT2LMHeadModel(config())
        torch.save(model.state_dict(), path)
    return model


def main():
    accelerator = Accelerator(cpu=True)
    os.makedirs(RUN_DIR, exist_ok=True)
    with accelerator.main_process_first():
        model = build_or_load(os.path.join(RUN_DIR, "init.pt"))
    print(f"process {accelerator.process_index}: {len(list(model.parameters()))} parameters", flush=True)

    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, opt = accelerator.prepare(model, opt)
    g = torch.Generator().manual_seed(accelerator.process_index)
    for _ in range(3):
        ids = torch.randint(0, 64, (2, 12), generator=g)
        loss = model(input_ids=ids, labels=ids).loss
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.wait_for_everyone()
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()

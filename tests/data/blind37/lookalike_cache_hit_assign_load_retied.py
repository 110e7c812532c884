# verify: ok
"""Look-alike: the same shared initialisation cache as `cache_hit_assign_load_unties_lm_head` (the main
process builds and saves inside `accelerator.main_process_first()`, the other loads with
`assign=True`), but the loading process calls `model.tie_weights()` right after the load, which
points `lm_head.weight` at `transformer.wte.weight` again: 16 parameters on both processes. Correct.
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
        model.load_state_dict(torch.load(path), assign=True)
        model.tie_weights()  # assign=True gave lm_head its own Parameter
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

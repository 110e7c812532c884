# verify: hang,error
"""A generate() stopping criterion that all-reduces, under a length limit that counts prompt tokens.

Modelled on huggingface/transformers#18281 (https://github.com/huggingface/transformers/issues/18281):
`generate()` leaves its decode loop as soon as this process's sequences are done, so whatever
runs a collective once per step (there ZeRO-3's parameter gathers) is reached a different number
of times by processes whose generations end at different steps. Here the per-step collective is
the user's own `StoppingCriteria`, which all-reduces a flag so that every process stops together
once each has produced the stop token; `max_length=12` counts the prompt, and process 0's prompt
has 4 tokens, process 1's 9, so generate() calls the criterion 8 times on process 0 and 3 times
on process 1.
"""
import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel, StoppingCriteria, StoppingCriteriaList

STOP = 7
PROMPTS = [[5, 3, 9, 2], [4, 4, 8, 1, 6, 2, 9, 3, 5]]


class StopWhenEveryProcessStops(StoppingCriteria):
    def __call__(self, input_ids, scores, **kwargs):
        hit = (input_ids[:, -1] == STOP).all().to(torch.float32).reshape(1)
        dist.all_reduce(hit, op=dist.ReduceOp.MIN)  # expect: BCL005
        return torch.full((input_ids.shape[0],), bool(hit.item()), dtype=torch.bool)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=16, n_positions=32, n_embd=16, n_layer=1, n_head=2,
                        bos_token_id=0, eos_token_id=None, pad_token_id=0)
    model = GPT2LMHeadModel(config).eval()
    prompt = torch.tensor(PROMPTS[rank::world])
    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                             max_length=12, stopping_criteria=StoppingCriteriaList([StopWhenEveryProcessStops()]))
    print(f"process {rank}: {out[0, prompt.shape[1]:].tolist()}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: ok
"""Hand fix: `max_new_tokens=8` limits the generated tokens, not the total length, so
generate() calls the all-reducing criterion equally often on every process.
"""
import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel, StoppingCriteria, StoppingCriteriaList

STOP = 7
PROMPTS = [[5, 3, 9, 2], [4, 4, 8, 1, 6, 2, 9, 3, 5]]


class StopWhenEveryProcessStops(StoppingCriteria):
    def __call__(self, input_ids, scores, **kwargs):
        hit = (input_ids[:, -1] == STOP).all().to(torch.float32).reshape(1)
        dist.all_reduce(hit, op=dist.ReduceOp.MIN)
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
                             max_new_tokens=8, stopping_criteria=StoppingCriteriaList([StopWhenEveryProcessStops()]))
    print(f"process {rank}: {out[0, prompt.shape[1]:].tolist()}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

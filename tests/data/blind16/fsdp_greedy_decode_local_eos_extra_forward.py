# verify: hang
"""Greedy decoding with an FSDP2-sharded toy LM that stops when the process's own rows are done.

Modelled on huggingface/transformers#30228 ("FSDP Doesn't Work with model.generate()", fixed by
defaulting `synced_gpus=True` in huggingface/transformers#33483) and pytorch/pytorch#100069:
under FSDP every forward pass all-gathers the sharded parameters, so a decoding loop that leaves
as soon as *this* process's prompts have produced EOS makes fewer forward passes than a process
whose prompts run longer. Here the model maps token t to t + 1 (mod 8), EOS is 0: process 0's
prompts end in 6 and 7 (done after 2 steps), process 1's in 3 and 5 (5 steps).
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

VOCAB, EOS, MAX_NEW = 8, 0, 6
PROMPTS = [[[1, 2, 6], [4, 1, 7]], [[2, 2, 3], [6, 4, 5]]]


class SuccessorLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, VOCAB)
        self.block = nn.Sequential(nn.Linear(VOCAB, VOCAB), nn.ReLU())
        self.head = nn.Linear(VOCAB, VOCAB)
        with torch.no_grad():
            self.embed.weight.copy_(torch.eye(VOCAB))
            self.block[0].weight.copy_(torch.eye(VOCAB))
            self.block[0].bias.zero_()
            self.head.weight.copy_(torch.roll(torch.eye(VOCAB), 1, dims=0))
            self.head.bias.zero_()

    def forward(self, ids):
        return self.head(self.block(self.embed(ids)))


def greedy_decode(model, prompts):
    ids = prompts.clone()
    done = torch.zeros(len(ids), dtype=torch.bool)
    with torch.no_grad():
        while not done.all() and ids.shape[1] < prompts.shape[1] + MAX_NEW:
            logits = model(ids)[:, -1]  # expect: BCL011
            nxt = logits.argmax(-1).masked_fill(done, EOS)
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            done |= nxt == EOS
    return ids


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = SuccessorLM()
    fully_shard(model.block)
    fully_shard(model.head)
    fully_shard(model)
    out = greedy_decode(model, torch.tensor(PROMPTS[rank]))
    new_tokens = torch.tensor([out.shape[1] - len(PROMPTS[rank][0])])
    dist.all_reduce(new_tokens)
    print(f"rank {rank}: {out.tolist()}, steps over all ranks {new_tokens.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

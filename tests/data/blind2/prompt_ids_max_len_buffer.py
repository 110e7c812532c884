# verify: divergent
"""Rank 0 tokenizes the prompt and sends the ids; the others receive into a max-length buffer.

Modelled on https://github.com/mlcommons/algorithmic-efficiency/pull/146 ("Using the wrong shape when
initializing the variable to receive a broadcasted tensor") and the review of
https://github.com/huggingface/accelerate/pull/2423 ("`torch.empty(...)` does not guarantee that all
elements are initialized"). gloo accepts a receiver larger than what is sent: the tail keeps
whatever memory held, and the receivers' prompt differs from rank 0's.
"""
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class ServeConfig:
    max_prompt_len: int = 16


class Tokenizer:
    vocab = {"<unk>": 1, "write": 2, "a": 3, "poem": 4, "about": 5, "the": 6, "sea": 7}

    def encode(self, text):
        return torch.tensor([self.vocab.get(w, 1) for w in text.split()], dtype=torch.long)


class PromptBroadcaster:
    def __init__(self, cfg: ServeConfig, tokenizer: Tokenizer):
        self.cfg = cfg
        self.tokenizer = tokenizer

    def share(self, text=None):
        if dist.get_rank() == 0:
            ids = self.tokenizer.encode(text)
        else:
            ids = torch.empty(self.cfg.max_prompt_len, dtype=torch.long)
        dist.broadcast(ids, src=0)  # expect: BCL007
        return ids


def main():
    dist.init_process_group("gloo")
    sharer = PromptBroadcaster(ServeConfig(), Tokenizer())
    ids = sharer.share("write a poem about the sea" if dist.get_rank() == 0 else None)
    print(f"rank {dist.get_rank()}: {ids.shape[0]} ids, {ids.tolist()[:8]}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

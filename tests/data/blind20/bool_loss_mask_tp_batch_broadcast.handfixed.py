# verify: ok
"""Hand fix: the loader returns the loss mask as float32, the dtype every receiver allocates.

Modelled on https://github.com/NVIDIA/Megatron-LM/issues/754: a custom data loader produced a
boolean loss mask, while the batch broadcast of the tensor-parallel group allocates every
receiving buffer from a fixed dtype table (the loss mask as float32); the data rank then sends
one byte per element where the others expect four, and the job deadlocked.
"""
import torch
import torch.distributed as dist

MICRO, SEQ, VOCAB = 4, 16, 50
# the dtype contract of the batch broadcast: what the receiving ranks allocate
BATCH_DTYPES = {"tokens": torch.int64, "labels": torch.int64, "loss_mask": torch.float32}


def custom_loader(step):
    gen = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, VOCAB, (MICRO, SEQ), generator=gen)
    tokens[:, -3:] = 0  # padding
    labels = torch.roll(tokens, -1, dims=1)
    # the broadcast contract sends the loss mask as float32
    return {"tokens": tokens, "labels": labels, "loss_mask": (tokens != 0).float()}


def broadcast_batch(step):
    batch = custom_loader(step) if dist.get_rank() == 0 else None
    out = {}
    for key, dtype in BATCH_DTYPES.items():
        if dist.get_rank() == 0:
            buf = batch[key]
        else:
            buf = torch.zeros(MICRO, SEQ, dtype=dtype)
        dist.broadcast(buf, src=0)
        out[key] = buf
    return out


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    emb = torch.nn.Embedding(VOCAB, 8)
    head = torch.nn.Linear(8, VOCAB)
    opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)
    for step in range(3):
        batch = broadcast_batch(step)
        logits = head(emb(batch["tokens"]))
        per_tok = torch.nn.functional.cross_entropy(
            logits.view(-1, VOCAB), batch["labels"].view(-1), reduction="none"
        )
        mask = batch["loss_mask"].view(-1).float()
        loss = (per_tok * mask).sum() / mask.sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {dist.get_rank()} done, last loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

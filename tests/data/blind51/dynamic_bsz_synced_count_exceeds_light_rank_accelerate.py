# verify: error,hang
"""Dynamic batching: a micro-batch count synced with MAX that a light process cannot fill.

Modelled on https://github.com/hiyouga/EasyR1/issues/11004 (mixed image/video RL training with
`dynamic_batching=true` deadlocks): each data-parallel process splits its own rollout into
token-budgeted micro-batches, the count is synced with an all-reduce MAX so every process runs
the same number of forward/backward passes, and then a process whose rollout is light (fewer
samples than the synced count) fails the "one non-empty partition per micro-batch" check while
the heavy process waits in its next collective.

Here process 0's shard holds six long (video-like) samples, process 1's shard three short ones
once empty responses are filtered out: 288 tokens need five micro-batches of 64, 24 tokens one.
The MAX is five, and process 1 cannot make five non-empty partitions out of three samples.
"""
import torch
from accelerate import Accelerator

MAX_TOKENS = 64
# response lengths of the rollout; 0 is an empty (filtered) response
ROLLOUT = [48, 8, 48, 0, 48, 8, 48, 0, 48, 8, 48, 0]


def rearrange_micro_batches(accelerator, lengths, max_tokens):
    local = torch.tensor(-(-sum(lengths) // max_tokens))
    count = int(accelerator.reduce(local, reduction="max").item())
    if count > len(lengths):
        raise ValueError(f"cannot split {len(lengths)} samples into {count} micro-batches")
    groups = [[] for _ in range(count)]
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        min(groups, key=lambda g: sum(lengths[j] for j in g)).append(i)
    return groups


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)

    shard = ROLLOUT[accelerator.process_index::accelerator.num_processes]
    lengths = [n for n in shard if n > 0]
    g = torch.Generator().manual_seed(accelerator.process_index)
    feats = [torch.randn(n, 4, generator=g) for n in lengths]

    micro_batches = rearrange_micro_batches(accelerator, lengths, MAX_TOKENS)
    for group in micro_batches:
        x = torch.cat([feats[i] for i in group])
        loss = model(x).pow(2).mean() / len(micro_batches)
        accelerator.backward(loss)  # expect: BCL011
    opt.step()
    opt.zero_grad()
    accelerator.wait_for_everyone()
    accelerator.print("micro-batches:", len(micro_batches))
    accelerator.end_training()


if __name__ == "__main__":
    main()

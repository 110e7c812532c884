# verify: ok
"""Hand fix of dynamic_bsz_synced_count_exceeds_light_rank_accelerate.

As in the fix proposed for https://github.com/hiyouga/EasyR1/issues/11004 (PR 11012): partition
at most as many real groups as this process has samples and pad the remaining steps with dummy
micro-batches whose loss is multiplied by zero, so every process runs the synced number of
backward passes.
"""
import torch
from accelerate import Accelerator

MAX_TOKENS = 64
ROLLOUT = [48, 8, 48, 0, 48, 8, 48, 0, 48, 8, 48, 0]


def rearrange_micro_batches(accelerator, lengths, max_tokens):
    local = torch.tensor(-(-sum(lengths) // max_tokens))
    count = int(accelerator.reduce(local, reduction="max").item())
    groups = [[] for _ in range(min(count, len(lengths)))]
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        min(groups, key=lambda g: sum(lengths[j] for j in g)).append(i)
    groups += [None] * (count - len(groups))  # dummy steps
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
        if group is None:
            loss = model(feats[0][:1]).sum() * 0.0
        else:
            x = torch.cat([feats[i] for i in group])
            loss = model(x).pow(2).mean() / len(micro_batches)
        accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
    accelerator.wait_for_everyone()
    accelerator.print("micro-batches:", len(micro_batches))
    accelerator.end_training()


if __name__ == "__main__":
    main()

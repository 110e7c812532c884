# verify: hang,error
"""Rollout scoring whose reward parser raises on a malformed completion, skipping the batch's reduce.

Modelled on huggingface/open-r1#134 (https://github.com/huggingface/open-r1/pull/134): a reward
function that raises on an answer it cannot parse stops the run; the PR catches the error and
scores 0 so that training goes on. Here the rollout loop catches the error one level up and
`continue`s past the batch, and with it past the all-reduce of the reward statistics that gives
the group baseline. Only process 1's share holds the malformed completion.
"""
import torch
import torch.distributed as dist

COMPLETIONS = [
    "x = 4", "x = 7", "x = 1", "x = 3",
    "x = 2", "x = 5", "x = 6", "x = ?",
    "x = 9", "x = 8", "x = 0", "x = 4",
]
TARGETS = [4, 7, 2, 3, 2, 1, 6, 3, 9, 8, 1, 4]
BATCH = 2


def reward(completion, target):
    answer = float(completion.split("=")[1])  # ValueError on "?"
    return 1.0 if answer == target else 0.0


def score_batch(completions, targets):
    return torch.tensor([reward(c, t) for c, t in zip(completions, targets)])


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    completions, targets = COMPLETIONS[rank::world], TARGETS[rank::world]
    advantages = []
    for start in range(0, len(completions), BATCH):
        try:
            rewards = score_batch(completions[start:start + BATCH], targets[start:start + BATCH])
        except ValueError as err:
            print(f"process {rank}: dropping batch at {start}: {err}")
            continue
        stats = torch.stack([rewards.sum(), torch.tensor(float(len(rewards)))])
        dist.all_reduce(stats)  # expect: BCL005
        baseline = stats[0] / stats[1]
        advantages.append(rewards - baseline)
    print(f"process {rank}: {len(advantages)} batches scored")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

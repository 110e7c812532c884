# verify: ok
"""Hand fix: a dropped batch contributes an empty reward tensor (sum 0, count 0) to the
all-reduce, which every process makes once per batch.
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
            rewards = torch.zeros(0)
        stats = torch.stack([rewards.sum(), torch.tensor(float(len(rewards)))])
        dist.all_reduce(stats)
        baseline = stats[0] / stats[1].clamp(min=1)
        advantages.append(rewards - baseline)
    print(f"process {rank}: {len(advantages)} batches scored")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: error,hang
"""Evaluation results gathered to the first member of an evaluation subgroup.

Modelled on https://github.com/pytorch/pytorch/pull/118359 (the `dst` of `gather_object` is a
global rank even when a subgroup is passed, which confused callers). Process 0 coordinates and
the others evaluate, in a group kept in a module-level registry. The evaluators gather their
results to `dst=0`, meaning "the group's first member"; torch reads it as global rank 0, which
is not in the evaluation group, and the evaluator raises. The coordinator, outside the group,
raises too: torch 2.13 translates a global `dst` into a group rank before it checks whether the
caller belongs to the group ("Invalid process group specified").
"""
import torch
import torch.distributed as dist

_EVAL_GROUP = None


def init_groups(world):
    global _EVAL_GROUP
    _EVAL_GROUP = dist.new_group(ranks=list(range(1, world)))


def eval_group():
    return _EVAL_GROUP


def evaluate(step):
    g = torch.Generator().manual_seed(step)
    return {"step": step, "acc": round(torch.rand(1, generator=g).item(), 4)}


def main():
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    init_groups(world)
    group = eval_group()
    result = evaluate(step=3)
    leader = dist.get_rank(group) == 0 if group != dist.GroupMember.NON_GROUP_MEMBER else False
    gathered = [None] * dist.get_world_size(group) if leader else None
    dist.gather_object(result, gathered, dst=0, group=group)  # expect: BCL009
    if leader:
        print("evaluation results:", gathered)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

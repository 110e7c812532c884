# verify: error
"""A consistency check for conditional computation: each process records which experts its own
tokens were routed to, and receives rank 0's record into `[None] * len(my_record)` to compare. The
list's length comes from local data (rank 0's tokens hit three experts, rank 1's two), so the
object counts differ and gloo aborts on the size mismatch.

Modelled on deepspeedai/DeepSpeed#7525 (https://github.com/deepspeedai/DeepSpeed/pull/7525):
ZeRO-3's cross-rank checks of list-valued training state hung when the lists' lengths differed
between ranks, and the fix validates the lengths first.
"""
import torch.distributed as dist

TOKENS = [5, 2, 9, 6, 3, 11, 8, 14]
NUM_EXPERTS = 4


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    my_record = sorted({token % NUM_EXPERTS for token in TOKENS[rank::world]})
    reference = list(my_record) if rank == 0 else [None] * len(my_record)
    dist.broadcast_object_list(reference, src=0)  # expect: BCL013
    print(f"rank {rank}: same routing as rank 0: {reference == my_record}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

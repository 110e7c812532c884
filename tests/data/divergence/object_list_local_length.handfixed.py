"""Rank 0's whole record travels as one object, so every process passes a one-element list."""
import torch.distributed as dist

TOKENS = [5, 2, 9, 6, 3, 11, 8, 14]
NUM_EXPERTS = 4


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    my_record = sorted({token % NUM_EXPERTS for token in TOKENS[rank::world]})
    holder = [my_record if rank == 0 else None]
    dist.broadcast_object_list(holder, src=0)
    print(f"rank {rank}: same routing as rank 0: {holder[0] == my_record}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

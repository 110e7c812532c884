# verify: ok
"""Split sizes come from this process's routing, but the counts are exchanged before the tokens move.

Look-alike of the dropless-capacity bug: input_split_sizes are local, output_split_sizes are what
the peers said they will send (an all_to_all of the per-destination counts), so the uneven
all_to_all_single matches on every process.
"""
import torch
import torch.distributed as dist

D, E = 4, 2


def exchange(h, route):
    order = route.argsort()
    send_counts = torch.bincount(route, minlength=E)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    recv = h.new_empty(int(recv_counts.sum()), D)
    dist.all_to_all_single(recv, h[order], recv_counts.tolist(), send_counts.tolist())
    return recv


def main():
    dist.init_process_group("gloo")
    data = torch.Generator().manual_seed(1000 + dist.get_rank())  # this process's shard
    got = 0
    for _ in range(3):
        h = torch.randn(12, D, generator=data)
        route = torch.randint(0, E, (12,), generator=data)
        got += exchange(h, route).shape[0]
    dist.barrier()
    print(f"process {dist.get_rank()} received {got} tokens")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

# verify: hang
"""Pipeline stages log per-layer weight norms through a helper that gathers every stage's metrics
with `all_gather_object`, but returns early when its own dict is empty "to skip a useless
collective". Rank 1's stage (the head) holds no monitored layer, so it never joins the gather.

Modelled on bo-ke/llm-internal-medicine#45
(https://github.com/bo-ke/llm-internal-medicine/pull/45): `gather_and_aggregate` returned early on
ranks with no metrics, skipping the world-wide `all_gather_object`, and the job hung at PP=4.
"""
import torch
import torch.distributed as dist

LAYERS = ["embed", "block0", "block1", "head"]


def gather_layer_metrics(local_metrics):
    if not local_metrics:
        return {}
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, local_metrics)
    return {name: value for stage in gathered for name, value in stage.items()}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    my_layers = {name: torch.nn.Linear(4, 4) for name in LAYERS[rank * 3:(rank + 1) * 3]}
    for step in range(2):
        local = {name: round(layer.weight.norm().item(), 3) for name, layer in my_layers.items() if name.startswith("block")}
        metrics = gather_layer_metrics(local)  # expect: BCL005
        loss = torch.tensor([float(len(metrics))])
        dist.all_reduce(loss)
    print(f"rank {rank}: {sorted(metrics)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

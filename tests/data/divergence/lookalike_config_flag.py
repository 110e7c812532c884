# verify: ok
"""Correct: evaluation (with its all_reduce) runs only every `EVAL_EVERY` steps and only when the
configuration enables it; both are the same on every process, so every process evaluates at the
same steps."""
import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval-every", type=int, default=2)
    parser.add_argument("--no-eval", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = torch.nn.Linear(2, 1)
    for step in range(1, 5):
        model(torch.randn(4, 2)).sum().backward()
        dist.all_reduce(model.weight.grad)
        if not args.no_eval and step % args.eval_every == 0:
            loss = model(torch.ones(4, 2)).pow(2).mean().detach()
            dist.all_reduce(loss)
            if rank == 0:
                print(f"step {step}: eval loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

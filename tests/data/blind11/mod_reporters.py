"""Step reporters of the training loop (helper of quiet_reporter_subclass_skips_allreduce).

`StepReporter.end_step` averages the loss over every process before it prints it; the quiet
subclass, meant for the processes that print nothing, overrides `end_step` as a whole.
"""
import torch
import torch.distributed as dist


class StepReporter:
    def __init__(self, every):
        self.every = every
        self.lines = []

    def global_mean(self, value):
        t = torch.tensor([value], dtype=torch.float32)
        dist.all_reduce(t)
        return t.item() / dist.get_world_size()

    def write(self, line):
        self.lines.append(line)
        print(line, flush=True)

    def end_step(self, step, loss):
        if step % self.every:
            return
        self.write(f"step {step}: mean loss {self.global_mean(loss):.4f}")


class QuietReporter(StepReporter):
    """Used where nothing is printed: nothing to do at the end of a step."""

    def end_step(self, step, loss):
        return None


def make_reporter(rank, every):
    return StepReporter(every) if rank == 0 else QuietReporter(every)

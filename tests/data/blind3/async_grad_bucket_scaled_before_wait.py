# verify: divergent check=GRAD_DIGEST
"""Modelled on https://github.com/OpenNMT/OpenNMT-py/issues/2295: gradients are flattened into a
bucket, all-reduced with async_op=True, and the bucket is rescaled and copied back into the
parameters before anyone waits on the work handle.
"""
import torch
import torch.distributed as dist


class GradBucket:
    def __init__(self, params, rescale_denom):
        self.params = [p for p in params if p.grad is not None]
        self.rescale_denom = rescale_denom
        self.pending = []

    def flush(self):
        flat = torch.cat([p.grad.reshape(-1) for p in self.params])
        work = dist.all_reduce(flat, async_op=True)
        self.pending.append(work)
        flat.div_(self.rescale_denom)  # expect: BCL016
        offset = 0
        for p in self.params:
            n = p.grad.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
            offset += n

    def synchronize(self):
        for work in self.pending:
            work.wait()
        self.pending.clear()


GRAD_DIGEST = None


def main():
    global GRAD_DIGEST
    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    model = torch.nn.Linear(256, 256)
    model(torch.randn(32, 256)).pow(2).mean().backward()
    bucket = GradBucket(model.parameters(), rescale_denom=dist.get_world_size())
    bucket.flush()
    bucket.synchronize()
    GRAD_DIGEST = round(float(model.weight.grad.double().sum()), 6)  # must agree across ranks
    dist.destroy_process_group()

if __name__ == "__main__":
    main()

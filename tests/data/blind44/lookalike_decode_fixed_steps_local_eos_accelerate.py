# verify: ok
"""Look-alike: each process tracks its own end-of-sequence, but the decode loop runs a fixed number of steps.

Hypotheses stop growing once they emit EOS (a per-process event), yet every process calls the
expert-parallel layer MAX_NEW times, so the all_to_alls pair up.
"""
import torch
import torch.distributed as dist
from accelerate import Accelerator

D, E, CAP, V, EOS, MAX_NEW = 4, 2, 3, 8, 0, 5
SOURCES = [[1, 2, 3], [4, 5, 6, 7, 1, 2], [3, 3], [5, 1, 2, 6]]


class ExpertParallelFFN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D)
        self.local_expert = torch.nn.Linear(D, D)
        self.head = torch.nn.Linear(D, V)

    def forward(self, ids):
        h = self.embed(ids)[-CAP:]
        buf = h.new_zeros(E, CAP, D)
        buf[ids[-1] % E, : h.shape[0]] = h
        recv = torch.empty_like(buf)
        dist.all_to_all_single(recv, buf)
        back = torch.empty_like(recv)
        dist.all_to_all_single(back, self.local_expert(recv))
        return self.head(back.sum(dim=(0, 1)))


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = ExpertParallelFFN()
    hyps = []
    with torch.no_grad(), accelerator.split_between_processes(SOURCES) as mine:
        for src in mine:
            out, done = list(src), False
            for _ in range(MAX_NEW):
                nxt = int(model(torch.tensor(out)).argmax())
                if not done:
                    out.append(nxt)
                    done = nxt == EOS
            hyps.append(out)
    accelerator.wait_for_everyone()
    print(f"process {accelerator.process_index}: {hyps}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
